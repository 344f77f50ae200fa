// A plain string-prompt query.
import { baseOptions, run } from "./common.mjs";

await run("say hi", baseOptions());
