// A background command that the host stops as soon as it starts (`stopTask`), for
// tests/subagents/test_sdk_tasks.py.
import { query } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions } from "./common.mjs";

const q = query({ prompt: "[[MAIN]] go", options: { ...baseOptions(), allowedTools: ["Bash"] } });
for await (const message of q) {
  console.log(JSON.stringify({ message }));
  if (message.type === "system" && message.subtype === "task_started") {
    await q.stopTask(message.task_id);
  }
}
console.log(JSON.stringify({ summary: {} }));
