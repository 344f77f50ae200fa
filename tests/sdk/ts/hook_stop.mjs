// Hooks that end a run: PreToolUse `continue: false` (the tool still runs, then the run ends
// with a success), or a UserPromptSubmit block (nothing goes to the model). HOOK_CASE picks.
import { baseOptions, run } from "./common.mjs";

const seen = [];
const hooks = process.env.HOOK_CASE === "block"
  ? { UserPromptSubmit: [{ hooks: [async (input) => {
      seen.push(input.hook_event_name);
      return { decision: "block", reason: "not from this host" };
    }] }] }
  : { PreToolUse: [{ hooks: [async (input) => {
      seen.push(input.hook_event_name);
      return { continue: false, stopReason: "enough for today" };
    }] }] };
await run("go", { ...baseOptions(), hooks }, () => ({ seen }));
