"""`wisp --help` (and `wisp help`). A constant, so printing it imports nothing else.

A test holds it to the argv table: every flag named here is one wisp parses."""

from __future__ import annotations

HELP = """\
Usage: wisp [options] [prompt]
       wisp serve [options]          (wisp serve --help)
       wisp acp                      (wisp acp --help)
       wisp help [serve]

An open agent runtime, wire-compatible with the Claude Agent SDKs.

Modes:
  wisp [prompt]                   The terminal UI (in a terminal, without -p); a prompt
                                  given here is sent first
  wisp -p <prompt>                Run one prompt headless and print the result; the
                                  prompt may also come on stdin, and what is piped
                                  in follows a prompt argument (git diff | wisp -p …)
  wisp --input-format stream-json --output-format stream-json --verbose
                                  Duplex NDJSON on stdin/stdout: what the official
                                  Agent SDKs (Python, TypeScript) speak
  wisp serve                      Sessions over HTTP (the Managed Agents API)
  wisp acp                        The Agent Client Protocol on stdin/stdout, for
                                  editors (Zed, JetBrains IDEs, Neovim, Emacs)
  wisp --probe --model <spec>     Check what an OpenAI-compatible server can do
  wisp sandbox check              Which OS sandbox can run here (exit 1 when settings
                                  turn the sandbox on but it cannot be enforced)

Output:
  -p, --print                     Headless: run the prompt, print the result, exit
  --output-format <fmt>           text (default), json (one result object) or
                                  stream-json (NDJSON; needs --verbose)
  --input-format <fmt>            text (default) or stream-json
  --verbose                       Required with stream-json output
  --include-partial-messages      Stream stream_event frames (stream-json only)
  --json-schema <schema>          Structured output, validated against a JSON Schema

Sessions:
  -c, --continue                  Continue the most recent session in this folder
  -r, --resume [id-or-title]      Resume a session by id or title
  --fork-session                  With -c or -r: continue under a new session id
  --session-id <uuid>             Use this id for a new session
  --no-session-persistence        Do not save the session (cannot be resumed)

Model:
  --model <spec>                  An alias (opus, sonnet, haiku), a model id, or
                                  <provider>:<model>: anthropic:<model>,
                                  openai:<model> (OPENAI_BASE_URL, OPENAI_API_KEY), or a
                                  provider defined under "providers" in settings
  --fallback-model <spec>         Used when the main model is overloaded or missing
  --max-turns <n>                 Stop after n model turns
  --max-budget-usd <usd>          Stop once the session has cost this much

Prompt and context:
  --system-prompt <text>          Replace the system prompt ("" for none)
  --system-prompt-file <path>     Replace it with a file's contents
  --append-system-prompt <text>   Append to the system prompt
  --add-dir <dirs>                More folders the tools may work in
  --agents <json-or-file>         Subagents: {"name": {"description", "prompt", ...}}
  --mcp-config <json-or-file>     MCP servers ({"mcpServers": {...}}), repeatable
  --strict-mcp-config             Only the servers of --mcp-config
  --plugin-dir <dir>              Load a plugin for this session, repeatable

Tools and permissions:
  --tools <names>                 Built-in tools to offer ("" for none, "default")
  --allowedTools <rules>          Rules allowed without asking, e.g. "Bash(git *) Edit"
  --disallowedTools <rules>       Tools removed, or rules that are denied
  --permission-mode <mode>        default, acceptEdits, plan, auto, dontAsk or
                                  bypassPermissions
  --dangerously-skip-permissions  Start in bypassPermissions (as root, needs IS_SANDBOX=1)
  --allow-dangerously-skip-permissions
                                  Allow switching to bypassPermissions later
  --permission-prompt-tool <tool> Who answers permission prompts with -p (stdio: the
                                  SDK host)

Settings:
  --settings <file-or-json>       More settings, above every settings file
  --setting-sources <sources>     Which files to load: user, project, local
                                  (default: all three)

  -h, --help                      Print this help
  -v, --version                   Print the version

Options of the reference CLI that wisp does not implement are accepted with a warning;
any other unknown option is an error.

Environment: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL,
OPENAI_API_KEY, OPENAI_BASE_URL, CLAUDE_CODE_MAX_RETRIES / WISP_MAX_RETRIES,
CLAUDE_CONFIG_DIR / WISP_CONFIG_DIR (settings and sessions; default ~/.claude),
WISP_RECORD / WISP_REPLAY (record or replay model exchanges).

Try it offline: python -m wisp.testing.server -- wisp -p hello
"""
