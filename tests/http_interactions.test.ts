// The interactions suite again, through threadClient over threadApi (in-process fetch).
import { interactionsSuite } from "./support/interactions_suite.ts";
import { overHttp } from "./support/over_http.ts";

interactionsSuite(overHttp);
