// The subscribe suite again, through threadClient over threadApi (in-process fetch).
import { updatesSuite } from "./support/updates_suite.ts";
import { overHttp } from "./support/over_http.ts";

updatesSuite(overHttp);
