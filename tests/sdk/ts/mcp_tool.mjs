// An in-process MCP server (createSdkMcpServer + tool) whose tool the model calls.
import { createSdkMcpServer, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { baseOptions, run } from "./common.mjs";

const calls = [];
const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
  calls.push({ a, b });
  return { content: [{ type: "text", text: String(a + b) }] };
});
const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
const options = { ...baseOptions(), mcpServers: { calc }, allowedTools: ["mcp__calc__add"] };
await run("add two numbers", options, () => ({ calls }));
