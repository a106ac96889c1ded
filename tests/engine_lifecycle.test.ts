// The lifecycle suite on the in-process service.
import { lifecycleSuite } from "./support/lifecycle_suite.ts";

lifecycleSuite((threads) => threads);
