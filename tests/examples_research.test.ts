// examples/research.ts runs as users run it, on the runtime running this test:
// a lead starts two scripted researchers, each searches (web_search on an in-memory
// backend) then reads the best hit (web_fetch on an in-memory web), and the lead
// answers from their reports, which name their sources.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

test(
  "the research example spawns two children that search then fetch, and answers from their reports",
  {
    timeout: 90_000,
  },
  () => {
    const file = "examples/research.ts";
    const args = "Deno" in globalThis
      ? ["run", "-A", file]
      : "Bun" in globalThis
      ? [file]
      : ["--import", "tsx", file];
    const result = spawnSync(process.execPath, args, {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    assert.equal(result.status, 0, output);
    assert.equal(output.match(/\[spawn_agent\] → \{"threadId":"thread_/g)?.length, 2, output);
    assert.match(output, /"status":"completed","report":"The Aster kettle costs 39 €/);
    assert.match(
      output,
      /lead: From my researchers: The Aster kettle .* Reviewers prefer the Birch kettle/,
    );
    assert.match(output, /2 child threads of thread_/);
    assert.match(output, /Prices: idle, turn completed\n/);
    assert.match(output, /Reviews: idle, turn completed\n/);
    assert.match(
      output,
      /searched "kettle prices" → https:\/\/kettles\.example\/prices, https:\/\/reviews\.example\/kettles\n {4}read https:\/\/kettles\.example\/prices \(completed\)/,
    );
    assert.match(
      output,
      /searched "kettle reviews" → https:\/\/reviews\.example\/kettles.*\n {4}read https:\/\/reviews\.example\/kettles \(completed\)/,
    );
    assert.match(
      output,
      /39 € and the Birch kettle 54 €\. \(source: https:\/\/kettles\.example\/prices\)/,
    );
    assert.match(output, /keeps heat longer\. \(source: https:\/\/reviews\.example\/kettles\)/);
  },
);
