// Slash commands and file checkpoints through the TS SDK: streamed prompts carrying their
// own uuids, rewindFiles (dry run, then for real), supportedCommands, /compact and /clear.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions } from "./common.mjs";

const work = process.env.WISP_WORK;
const queued = [];
let wake = null;
let closed = false;
function send(text, uuid = randomUUID()) {
  queued.push({ type: "user", message: { role: "user", content: text },
                parent_tool_use_id: null, session_id: "", uuid });
  wake?.();
  return uuid;
}
async function* prompts() {
  while (true) {
    while (queued.length) yield queued.shift();
    if (closed) return;
    await new Promise((resolve) => { wake = resolve; });
  }
}
const files = () => Object.fromEntries(["a.txt", "b.txt"].map((name) => {
  const path = join(work, name);
  return [name, existsSync(path) ? readFileSync(path, "utf8") : null];
}));

const q = query({ prompt: prompts(), options: { ...baseOptions(), enableFileCheckpointing: true,
                                                 permissionMode: "acceptEdits" } });
const summary = {};
const first = send("write a");
let second = null;
let results = 0;
for await (const message of q) {
  console.log(JSON.stringify({ message }));
  if (message.type !== "result") continue;
  results += 1;
  if (results === 1) {
    second = send("change things");
  } else if (results === 2) {
    summary.before = files();
    summary.dryRun = await q.rewindFiles(second, { dryRun: true });
    summary.afterDryRun = files();
    summary.rewound = await q.rewindFiles(second);
    summary.atSecond = files();
    summary.unknown = await q.rewindFiles(randomUUID(), { dryRun: true });
    summary.commands = (await q.supportedCommands()).map((c) => c.name);
    send("/compact keep it short");
  } else if (results === 3) {
    send("/clear");
  } else {
    closed = true;
    wake?.();
  }
}
console.log(JSON.stringify({ summary }));
