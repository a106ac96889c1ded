// The kill-soak in a short form on a Deno KV file: the host process (a Deno
// child, `deno run -A --unstable-kv`) opens `denoKvStore(await
// Deno.openKv(file))` and is SIGKILLed at random moments; the checks and the
// printed counts are the libSQL soak's (tests/support/soak_suite.ts). The long
// form is `npm run soak -- --minutes N --store deno-kv`. Only Deno has Deno KV:
// on Bun and Node this is skipped, saying so.
import { soakTest } from "./support/soak_suite.ts";
import { skipOffDeno } from "./support/skip.ts";

const skip = skipOffDeno(import.meta.url);

soakTest("Deno KV file", "deno-kv", { skip });
