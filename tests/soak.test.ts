// The kill-soak in a short form on a libSQL file (tests/support/soak.ts; the
// long form is `npm run soak -- --minutes N`): a host process is SIGKILLed at
// random moments while it runs tool conversations; after every restart and at
// the end no acknowledged send is lost, nothing is in the journal or ran
// twice, and the journal's invariants hold. The Deno KV run is
// soak_deno_kv.test.ts.
import { soakTest } from "./support/soak_suite.ts";

soakTest("libSQL file", "libsql");
