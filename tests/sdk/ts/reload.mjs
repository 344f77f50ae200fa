// reloadSkills and reloadPlugins: a skill written after start-up and a plugin added at run
// time are seen by the next turn (the model loads the skill and calls the plugin's tool).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions } from "./common.mjs";

let release;
const gate = new Promise((resolve) => { release = resolve; });
async function* prompts() {
  await gate;  // the prompt goes after both reloads
  yield { type: "user", message: { role: "user", content: "use what you have" },
          parent_tool_use_id: null, session_id: "" };
}

const tool = "mcp__plugin_deployer_calc__add";
const q = query({ prompt: prompts(), options: { ...baseOptions(), allowedTools: [tool] } });
const before = (await q.supportedCommands()).map((c) => c.name);
const folder = join(process.env.WISP_WORK, ".claude", "skills", "late");
mkdirSync(folder, { recursive: true });
writeFileSync(join(folder, "SKILL.md"),
  "---\nname: late\ndescription: Written after start-up\n---\nLATE-SKILL-BODY\n");
const skills = await q.reloadSkills();
// The SDK tracks the commands_changed frame that came ahead of the answer.
const after = (await q.supportedCommands()).map((c) => c.name);
const plugins = await q.reloadPlugins({ addPlugins: [{ type: "local", path: process.env.WISP_PLUGIN }] });
release();
for await (const message of q) {
  console.log(JSON.stringify({ message }));
  if (message.type === "result") break;
}
console.log(JSON.stringify({ summary: { before, after, skills, plugins } }));
