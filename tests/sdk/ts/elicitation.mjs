// A stdio MCP server asks the user mid-call; the TS SDK's onElicitation answers.
import { baseOptions, run } from "./common.mjs";

const asked = [];
const options = {
  ...baseOptions(),
  mcpServers: { elicit: { command: process.env.WISP_PYTHON, args: [process.env.WISP_ELICIT] } },
  allowedTools: ["mcp__elicit"],
  onElicitation: async (request) => {
    asked.push(request);
    return { action: "accept", content: { name: "Grace" } };
  },
};
await run("who am I", options, () => ({ asked }));
