// The TS SDK's sessionStore: the session is mirrored into an InMemorySessionStore as it
// runs (--session-mirror), then resumed from the store alone (local transcripts removed).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { InMemorySessionStore, getSessionMessages, query } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions } from "./common.mjs";

const store = new InMemorySessionStore();
const options = { ...baseOptions(), sessionStore: store };
let sessionId;
for await (const message of query({ prompt: "remember 42", options })) {
  console.log(JSON.stringify({ message }));
  if (message.type === "result") sessionId = message.session_id;
}
const stored = await getSessionMessages(sessionId, { dir: process.env.WISP_WORK,
                                                     sessionStore: store });
rmSync(join(process.env.CLAUDE_CONFIG_DIR, "projects"), { recursive: true, force: true });
let resumed;
for await (const message of query({ prompt: "what was it?",
                                    options: { ...options, resume: sessionId } })) {
  console.log(JSON.stringify({ message }));
  if (message.type === "result") resumed = message;
}
console.log(JSON.stringify({ summary: { sessionId, stored: stored.map((m) => m.type),
                                        resumed: resumed?.result } }));
