// A node --test reporter for the gate (scripts/test.mjs): one JSON line per
// finished test and per closing diagnostic. Node's TAP output names neither
// the file a test came from nor, once files run side by side, keeps a file's
// tests together; its events carry both, plus a skip's reason and the time.
//
//   node --test --test-reporter=./scripts/node_test_events.mjs \
//     --test-reporter-destination=events.jsonl tests/*.test.ts

/**
 * Turns the runner's event stream into JSON lines.
 *
 * @param {AsyncIterable<{ type: string, data: Record<string, any> }>} source
 */
export default async function* nodeTestEvents(source) {
  for await (const { type, data } of source) {
    if (type === "test:pass" || type === "test:fail") {
      yield JSON.stringify({
        type: type === "test:pass" ? "pass" : "fail",
        name: data.name,
        file: data.file,
        nesting: data.nesting,
        suite: data.details?.type === "suite",
        skip: data.skip,
        todo: data.todo,
        ms: data.details?.duration_ms,
      }) + "\n";
    } else if (type === "test:diagnostic") {
      yield JSON.stringify({ type: "diagnostic", message: data.message }) + "\n";
    }
  }
}
