// LangGraph.js on the shared overhead workload (bench/lib/harness.mjs and
// bench/lib/script.mjs, the same harness Floret's bench/overhead.ts uses),
// with LangGraph's own PostgreSQL checkpointer on a fresh database of the
// server FLORET_POSTGRES_URL names. The agent is LangGraph's prebuilt ReAct
// agent, a scripted chat model that answers from the last message only, and
// one zod tool `add`.
//
//   cd bench/peers_postgres && npm install
//   FLORET_POSTGRES_URL=postgres://... node langgraph_postgres.mjs --variant postgres --mode seq --n 10
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { z } from "zod";
import { readFileSync } from "node:fs";
import { runBench } from "../lib/harness.mjs";
import { addHandler, nextAction, SYSTEM_PROMPT, toNumber, USER_PROMPT } from "../lib/script.mjs";

// Versions of the packages installed beside this file.
const versionOf = (name) =>
  JSON.parse(
    readFileSync(
      new URL(`./node_modules/${name}/package.json`, import.meta.url),
      "utf8",
    ),
  )
    .version;

// The model: what it answers depends only on the last message it is shown.
class CountingModel extends BaseChatModel {
  constructor(steps) {
    super({});
    this.steps = steps;
  }
  _llmType() {
    return "counting-script";
  }
  bindTools() {
    return this;
  }
  _generate(messages) {
    const last = messages.at(-1);
    const value = last._getType() === "tool" ? toNumber(last.content) : undefined;
    const next = nextAction(value, this.steps);
    const message = next.type === "tool"
      ? new AIMessage({
        content: "",
        tool_calls: [{
          type: "tool_call",
          id: next.callId,
          name: "add",
          args: { a: next.a, b: next.b },
        }],
      })
      : new AIMessage({ content: next.text });
    return Promise.resolve({
      generations: [{ text: next.type === "tool" ? "" : next.text, message }],
    });
  }
}

const add = tool((input) => Promise.resolve(addHandler(input)), {
  name: "add",
  description: "Add two numbers",
  schema: z.object({ a: z.number(), b: z.number() }),
});

// A database of its own for this measurement, dropped at teardown.
async function freshDatabase() {
  const adminUrl = process.env.FLORET_POSTGRES_URL;
  if (!adminUrl) throw new Error("set FLORET_POSTGRES_URL");
  const name = `langgraph_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: adminUrl });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

await runBench("langgraph", {
  "@langchain/langgraph": versionOf("@langchain/langgraph"),
  "@langchain/core": versionOf("@langchain/core"),
  "@langchain/langgraph-checkpoint-postgres": versionOf(
    "@langchain/langgraph-checkpoint-postgres",
  ),
  pg: versionOf("pg"),
}, async ({ variant, N }) => {
  if (variant !== "postgres") {
    throw new Error(`unknown variant ${variant} (postgres)`);
  }
  const database = await freshDatabase();
  // The same pool size as Floret's postgres variant (20 connections).
  const pool = new pg.Pool({ connectionString: database.url, max: 20 });
  // pool.end() can resolve while a client is still closing; the DROP … WITH
  // (FORCE) at teardown then terminates it, and pg emits that on the pool. An
  // error while the pool is in use is a failed measurement and still throws.
  let tearingDown = false;
  pool.on("error", (error) => {
    if (!tearingDown) throw error;
    console.error(`langgraph pool closed at teardown: ${error.message}`);
  });
  const checkpointer = new PostgresSaver(pool);
  await checkpointer.setup();
  const agent = createReactAgent({
    llm: new CountingModel(N),
    tools: [add],
    prompt: SYSTEM_PROMPT,
    checkpointer,
  });
  return {
    info:
      "createReactAgent + PostgresSaver (pg.Pool of 20) on a fresh database of a local PostgreSQL " +
      "server (server defaults: fsync on, synchronous_commit on), thread_id per conversation",
    async runConversation(convId) {
      const out = await agent.invoke(
        { messages: [{ role: "user", content: USER_PROMPT }] },
        { configurable: { thread_id: convId }, recursionLimit: 2 * N + 10 },
      );
      const messages = out.messages;
      return {
        finalText: messages.at(-1).content,
        toolResults: messages.filter((m) => m._getType() === "tool").length,
      };
    },
    async teardown() {
      tearingDown = true;
      await pool.end();
      await database.drop();
      return {};
    },
  };
});
