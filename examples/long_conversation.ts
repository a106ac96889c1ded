/**
 * A long agent session in a small window: 200 scripted turns through an
 * 8,000-token context window. The engine compacts automatically whenever the
 * next request would reach 90 % of the window; each compaction is printed as
 * it happens, and the final figures come from `threads.context()`.
 *
 *   bun examples/long_conversation.ts
 *
 * The model is a deterministic stand-in written against the public `Gateway`
 * contract: it answers ordinary requests with a paragraph and summary
 * requests (whose first message is the engine's compaction-writer prompt, not
 * the agent's system prompt) with a short digest.
 */
import {
  defineAgent,
  type Gateway,
  memoryStore,
  openHost,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";

const SYSTEM_PROMPT = "You are a travel planner. Keep track of every decision the user makes.";
const TURNS = 200;
const WINDOW = 8_000;

const CITIES = ["Lisbon", "Porto", "Seville", "Granada", "Valencia", "Lyon", "Turin", "Bologna"];

function userMessage(turn: number): string {
  const city = CITIES[turn % CITIES.length];
  return `Turn ${turn}: add a day in ${city} and tell me what to see there. ` +
    "Please keep the budget in mind, prefer trains, and avoid early departures. ".repeat(6);
}

/** A stand-in model: a paragraph per answer, a digest per summary request. */
function standInModel(): Gateway & { summaries: number; requests: number } {
  const model = {
    summaries: 0,
    requests: 0,
    info: {
      provider: "example",
      model: "stand-in",
      stateKey: "example:stand-in",
      capabilities: { contextWindowTokens: WINDOW },
    },
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      await Promise.resolve();
      const first = request.messages[0];
      const summary = first.role === "system" && first.text !== SYSTEM_PROMPT;
      if (summary) model.summaries++;
      else model.requests++;
      const text = summary
        ? `Digest ${model.summaries}: the user is planning a rail trip through ` +
          `${CITIES.join(", ")}; budget-conscious, no early departures.`
        : `Noted. Here is a plan for that day: a morning walk through the old town, ` +
          `lunch near the market, a museum in the afternoon and a late train onwards. `.repeat(3);
      yield { type: "text", delta: text };
      yield { type: "finish", reason: "stop" };
    },
  };
  return model;
}

const gateway = standInModel();
const host = await openHost({
  store: memoryStore(),
  onEvent: (event) => {
    if (event.type !== "compaction") return;
    console.log(
      `compaction ${event.status} (${event.trigger}): ` +
        `${event.tokensBefore} → ${event.tokensAfter ?? "-"} tokens`,
    );
  },
});
const threads = host.threads({
  agent: defineAgent({
    id: "planner",
    systemPrompt: SYSTEM_PROMPT,
    gateway,
    context: { windowTokens: WINDOW },
  }),
});
const { threadId } = await threads.create({ requestKey: "create" });
for (let turn = 1; turn <= TURNS; turn++) {
  await threads.send({ threadId, requestKey: `turn-${turn}`, input: { text: userMessage(turn) } });
  const view = await threads.waitForIdle(threadId);
  const outcome = view.turns.at(-1)?.outcome;
  if (outcome !== "completed") throw new Error(`Turn ${turn} ended ${outcome}`);
}
const figures = await threads.context(threadId);
const view = await threads.view(threadId);
console.log(
  `${TURNS} turns completed; ${view.items.length} items kept in the view; ` +
    `${figures.compactions.length} compactions; next request ≈ ${figures.estimateTokens} ` +
    `of ${figures.windowTokens} tokens; ${gateway.requests} model requests, ` +
    `${gateway.summaries} summary requests.`,
);
await host.shutdown();
