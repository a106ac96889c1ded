// deno-fmt-ignore-file -- verbatim copy of the peers' lib/script.mjs (shared docs bench/peers); check: tail -n +2 | diff
// The scripted, zero-latency "model" shared by every peer.
//
// It is STATELESS: the next action depends only on the last message of the
// conversation it is shown, so a fake model instance can be shared by any
// number of concurrent conversations, and the engine must really feed each
// tool result back into the next model call or the chain breaks.
//
//   last message is the user prompt (no tool result yet) -> call add({a: 0, b: 1})
//   last message is a tool result with value v, v < N   -> call add({a: v, b: 1})
//   last message is a tool result with value v, v == N  -> answer text "done"
//
// add(a, b) returns a + b, so the tool is called with a = 0, 1, ..., N-1
// (exactly N tool calls) and the model is called N + 1 times.
//
// No timers, no I/O, no awaiting anything: whatever time a run takes is the
// engine's (plus the few nanoseconds of this function and the counters).

export const FINAL_TEXT = 'done';
export const SYSTEM_PROMPT = 'You are a counter. Use the add tool.';
export const USER_PROMPT = 'Count with the add tool.';

/** Global counters; the harness checks their deltas after every run. */
export const counters = { modelCalls: 0, toolCalls: 0 };

/**
 * @param {number|undefined} lastToolValue  numeric value of the last tool result,
 *        or undefined when the last message is the user's prompt.
 * @param {number} N  number of tool steps in this conversation.
 * @returns {{type:'tool', callId:string, a:number, b:number} | {type:'final', text:string}}
 */
export function nextAction(lastToolValue, N) {
  counters.modelCalls++;
  const v = lastToolValue === undefined ? 0 : lastToolValue;
  if (!Number.isInteger(v) || v < 0 || v > N) {
    throw new Error(`scripted model: unexpected last tool value ${lastToolValue} (N=${N})`);
  }
  if (v < N) return { type: 'tool', callId: `call_${v}`, a: v, b: 1 };
  return { type: 'final', text: FINAL_TEXT };
}

/** The `add` tool body every peer wraps in its own tool definition. */
export function addHandler({ a, b }) {
  counters.toolCalls++;
  if (typeof a !== 'number' || b !== 1) throw new Error(`add: bad args ${JSON.stringify({ a, b })}`);
  return a + b;
}

/** Parse a tool result that an engine may hand back as a number, a string, or JSON text. */
export function toNumber(x) {
  if (typeof x === 'number') return x;
  if (typeof x === 'string') return Number(x);
  throw new Error(`scripted model: cannot read tool value from ${JSON.stringify(x)}`);
}
