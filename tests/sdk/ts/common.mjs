// Shared by the scenario scripts: options that point the SDK at wisp, and a runner that
// prints every SDK message as one JSON line, then a summary line, for test_ts_sdk.py.
import { query } from "@anthropic-ai/claude-agent-sdk";

export function baseOptions() {
  return {
    pathToClaudeCodeExecutable: process.env.WISP_CLI,
    cwd: process.env.WISP_WORK,
    // TS replaces the child's environment with this object, so pass ours whole.
    env: { ...process.env },
    stderr: (data) => process.stderr.write(data),
  };
}

export async function run(prompt, options, extra = () => ({})) {
  for await (const message of query({ prompt, options })) {
    console.log(JSON.stringify({ message }));
  }
  console.log(JSON.stringify({ summary: extra() }));
}
