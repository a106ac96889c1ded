// The lifecycle suite again, through threadClient over threadApi (in-process fetch).
import { lifecycleSuite } from "./support/lifecycle_suite.ts";
import { overHttp } from "./support/over_http.ts";

lifecycleSuite(overHttp);
