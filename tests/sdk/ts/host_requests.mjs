// The host requests of seed 000 that the TS SDK's Query sends (some are public methods,
// the rest exist on the same object): each answer is printed in the summary.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions } from "./common.mjs";

let release;
const gate = new Promise((resolve) => { release = resolve; });
async function* prompts() {
  await gate;
  yield { type: "user", message: { role: "user", content: "hello" },
          parent_tool_use_id: null, session_id: "" };
}

const notes = join(process.env.WISP_WORK, "notes.txt");
writeFileSync(notes, "n\n");
const q = query({ prompt: prompts(), options: baseOptions() });
const summary = {};
summary.seeded = await q.seedReadState(notes, 1);
summary.backgrounded = await q.backgroundTasks();
summary.cancelled = await q.cancelAsyncMessage("no-such-message");
summary.title = await q.generateSessionTitle("fixing the parser", { persist: true });
summary.side = await q.askSideQuestion("what is left?");
summary.cwd = await q.setCwd(process.env.WISP_WORK);
summary.feedback = await q.submitFeedback("fine");
summary.rated = await q.messageRated({ messageUuid: "u1", sentiment: "positive",
                                       surface: "test" });
try {
  await q.launchUltrareview("x");
} catch (error) {
  summary.ultrareview = String(error.message);
}
release();
for await (const message of q) {
  console.log(JSON.stringify({ message }));
  if (message.type === "result") break;
}
console.log(JSON.stringify({ summary }));
