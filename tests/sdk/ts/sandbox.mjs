// The `sandbox` option (SANDBOX, JSON), which the SDK forwards inside --settings.
import { baseOptions, run } from "./common.mjs";

await run("go", { ...baseOptions(), sandbox: JSON.parse(process.env.SANDBOX) });
