// The interactions suite on the in-process service (http_interactions.test.ts runs it over HTTP).
import { interactionsSuite } from "./support/interactions_suite.ts";

interactionsSuite((threads) => threads);
