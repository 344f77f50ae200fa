// Runs one query through wisp, then asks the SDK's session helpers about it. Neither
// CLAUDE_CONFIG_DIR nor WISP_CONFIG_DIR is set (test_default_location.py): both sides must
// find the session in $HOME/.claude on their own.
import { getSessionInfo, getSessionMessages, listSessions } from "@anthropic-ai/claude-agent-sdk";
import { baseOptions, run } from "./common.mjs";

let sessionId = null;
const dir = process.env.WISP_WORK;
await run("remember this", baseOptions(), () => ({}));
const listed = await listSessions({ dir });
sessionId = listed.length ? listed[0].sessionId : null;
const messages = sessionId ? await getSessionMessages(sessionId, { dir }) : [];
const info = sessionId ? await getSessionInfo(sessionId) : null;
console.log(JSON.stringify({
  helpers: {
    listed: listed.map((s) => ({ sessionId: s.sessionId, summary: s.summary,
                                 firstPrompt: s.firstPrompt ?? null })),
    messages: messages.map((m) => ({ type: m.type, uuid: m.uuid })),
    info: info ? { sessionId: info.sessionId, summary: info.summary } : null,
  },
}));
