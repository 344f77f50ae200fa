// setMcpServers adds an in-process MCP server at run time; the model then calls its tool.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { baseOptions } from "./common.mjs";

const calls = [];
const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
  calls.push({ a, b });
  return { content: [{ type: "text", text: String(a + b) }] };
});
const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });

let release;
const gate = new Promise((resolve) => { release = resolve; });
async function* prompts() {
  await gate;  // the prompt goes after the server is added
  yield { type: "user", message: { role: "user", content: "add two numbers" },
          parent_tool_use_id: null, session_id: "" };
}

const q = query({ prompt: prompts(), options: { ...baseOptions(), allowedTools: ["mcp__calc__add"] } });
const added = await q.setMcpServers({ calc });
const status = await q.mcpServerStatus();
release();
for await (const message of q) {
  console.log(JSON.stringify({ message }));
  if (message.type === "result") break;
}
console.log(JSON.stringify({ summary: { added, status, calls } }));
