// The subscribe suite on the in-process service.
import { updatesSuite } from "./support/updates_suite.ts";

updatesSuite((threads) => threads);
