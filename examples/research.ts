/**
 * Floret sub-agents: a lead agent starts two researchers as child threads,
 * waits for both and answers from their reports. Every model here is
 * scripted, so it runs offline:
 *
 *   bun examples/research.ts
 *
 * The children are ordinary threads with a parent: the end of the script
 * lists them and shows the report each one handed back.
 */
import { defineAgent, memoryStore, openHost, type ProviderRequest } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";

/** The JSON outputs of the lead's earlier calls to one tool, read from the request it is sent. */
function outputsOf(request: ProviderRequest, tool: string): Record<string, unknown>[] {
  return request.messages.flatMap((m) =>
    m.role === "tool" && m.name === tool ? [JSON.parse(m.output)] : []
  );
}

// Each researcher reports with report_to_parent, then says it is done.
const researcher = (id: string, finding: string) =>
  defineAgent({
    id,
    systemPrompt: `You research ${id}. Report your finding to the lead, then stop.`,
    gateway: scriptedGateway([
      { toolCalls: [{ name: "report_to_parent", arguments: { text: finding } }] },
      { text: "Reported." },
    ]),
  });

const lead = defineAgent({
  id: "lead",
  systemPrompt: "Split the question between your researchers, wait for them, then answer.",
  subagents: [
    researcher("prices", "The Aster kettle costs 39 € and the Birch kettle 54 €."),
    researcher("reviews", "Reviewers prefer the Birch kettle: quieter, and it keeps heat longer."),
  ],
  gateway: scriptedGateway([
    {
      toolCalls: [
        {
          name: "spawn_agent",
          arguments: { agent: "prices", task: "Compare kettle prices", title: "Prices" },
        },
        {
          name: "spawn_agent",
          arguments: { agent: "reviews", task: "Summarise kettle reviews", title: "Reviews" },
        },
      ],
    },
    // The children's ids exist only now: the next step reads them from the spawn results.
    (request) => ({
      toolCalls: [{
        name: "wait_agents",
        arguments: { threadIds: outputsOf(request, "spawn_agent").map((o) => o.threadId) },
      }],
    }),
    (request) => {
      const [waited] = outputsOf(request, "wait_agents") as {
        agents: { report?: string }[];
      }[];
      const reports = waited.agents.map((agent) => agent.report).join(" ");
      return { text: `From my researchers: ${reports} So: Aster if price matters, else Birch.` };
    },
  ]),
});

const host = await openHost({ store: memoryStore() });
const threads = host.threads({ agent: lead });
const { threadId } = await threads.create({ requestKey: "research:create", title: "Kettles" });
const question = "Which kettle should I buy?";
console.log(`user: ${question}`);
await threads.send({ threadId, requestKey: "research:send", input: { text: question } });
const view = await threads.waitForIdle(threadId, { timeoutMs: 60_000 });

for (const item of view.items) {
  if (item.kind === "tool") console.log(`  [${item.tool?.name}] → ${item.tool?.output}`);
  if (item.kind === "assistant") console.log(`lead: ${item.text}`);
}
const { threads: children } = await threads.list({ parentThreadId: threadId });
console.log(`\n${children.length} child threads of ${threadId}:`);
for (const child of children.sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))) {
  const childView = await threads.view(child.threadId);
  console.log(`  ${child.title}: ${childView.status}, turn ${childView.turns.at(-1)?.outcome}`);
}
await host.shutdown();
