// A query with most options set, so the SDK's command builder emits most of its flags;
// WISP_ARGV_LOG (written by the recording wrapper the test passes as the executable)
// shows what reached wisp.
import { baseOptions, run } from "./common.mjs";

const dir = process.env.WISP_WORK;
const options = {
  ...baseOptions(),
  thinking: { type: "enabled", budgetTokens: 1024, display: "summarized" },
  effort: "low",
  maxTurns: 3,
  maxBudgetUsd: 1.5,
  taskBudget: { total: 5000 },
  model: "claude-sonnet-4-5",
  agent: "reviewer",
  agents: { reviewer: { description: "Reviews code", prompt: "You review." } },
  betas: ["context-1m-2025-08-07"],
  debugFile: `${dir}/debug.log`,
  permissionPromptToolName: "stdio",
  permissionPrompts: "host",
  allowedTools: ["Read", "Bash(git:*)"],
  disallowedTools: ["WebFetch"],
  tools: ["Read", "Bash"],
  settingSources: ["user", "project"],
  strictMcpConfig: true,
  permissionMode: "acceptEdits",
  allowDangerouslySkipPermissions: true,
  fallbackModel: "claude-haiku-4-5",
  includeHookEvents: true,
  includePartialMessages: true,
  additionalDirectories: [dir],
  plugins: [{ type: "local", path: `${dir}/plugin` }],
  persistSession: false,
  extraArgs: { "replay-user-messages": null },
  settings: { permissions: { allow: ["Read"] } },
};
await run("hello", options);
