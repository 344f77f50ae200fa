"""What a server family accepts, as one `Compat` per preset, each field overridable by a
provider's `compat` entry in settings (unknown keys are an error, so a typo is loud).

The fields are the request-shaping and stream-reading quirks of
`openai-compat-quirks.md`; the defaults are the conservative choice that most servers
accept (only `model`, `messages`, `stream`, `max_tokens`, tools, and usage reporting).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wisp.errors import UsageError

CHOICES: dict[str, tuple[Any, ...]] = {
    "system_role": ("system", "developer", "none"),
    "tool_then_user": ("ok", "insert_assistant"),
    "empty_assistant_content": ("null", "empty_string", "omit"),
    "content_format": ("string_when_text_only", "always_array", "always_string"),
    "tool_id_style": ("passthrough", "safe", "alnum9"),
    "max_tokens_field": ("max_tokens", "max_completion_tokens", "both", "none"),
    "stream_usage": ("include_usage", "continuous", "none"),
    "schema_mode": ("passthrough", "portable", "gemini", "openai_strict"),
    "reasoning_echo": ("none", "tool_turns", "all"),
    "reasoning_echo_field": ("reasoning_content", "reasoning", "reasoning_details"),
}
FALLBACKS = ("hermes_xml", "qwen_xml", "json")
BOOLEANS = ("tool_message_name", "send_parallel_tool_calls", "vision", "think_tags",
            "think_implicit_open", "allow_missing_done", "strip_unknown_fields_retry")


class Compat:
    """One server family's rules. Plain attributes; `with_overrides` makes a new one."""

    system_role = "system"
    tool_then_user = "ok"
    tool_message_name = False
    empty_assistant_content = "null"
    content_format = "string_when_text_only"
    tool_id_style = "passthrough"
    max_tokens_field = "max_tokens"
    stream_usage = "include_usage"
    send_parallel_tool_calls = False
    schema_mode = "portable"
    reasoning_echo = "none"
    reasoning_echo_field = "reasoning_content"
    send_reasoning = True  # False: a reasoning field in a request is rejected (Groq)
    vision = True
    think_tags = True  # inline <think>…</think> in content is reasoning
    think_implicit_open = False  # the template opened <think> already: text before </think>
    allow_missing_done = False  # a stream may end without [DONE] or a finish_reason
    strip_unknown_fields_retry = True  # a 400 naming a field: resend once without it
    extra_body: dict[str, Any]
    # Tool calls a server wrote as text (quirk 11): formats to read them from, only when
    # no native tool_calls came: "hermes_xml" (<tool_call>{json}</tool_call>),
    # "qwen_xml" (<function=name><parameter=k>v</parameter></function>), "json".
    text_tool_call_fallback: tuple[str, ...] = ()

    def __init__(self, name: str, **fields: Any) -> None:
        self.name = name
        self.extra_body = {}
        for key, value in fields.items():
            setattr(self, key, value)

    def with_overrides(self, overrides: Mapping[str, Any], where: str) -> Compat:
        fields = {k: v for k, v in vars(self).items() if k != "name"}
        for key, value in overrides.items():
            _check(key, value, where)
            fields[key] = tuple(value) if key == "text_tool_call_fallback" else value
        return Compat(self.name, **fields)

    def describe(self) -> dict[str, Any]:
        keys = [*CHOICES, *BOOLEANS, "send_reasoning", "extra_body", "text_tool_call_fallback"]
        return {"preset": self.name, **{k: getattr(self, k) for k in keys}}


def _check(key: str, value: Any, where: str) -> None:
    if key in CHOICES:
        if value not in CHOICES[key]:
            allowed = ", ".join(map(str, CHOICES[key]))
            raise UsageError(f"{where}: compat.{key} must be one of {allowed}, got {value!r}")
    elif key in (*BOOLEANS, "send_reasoning"):
        if not isinstance(value, bool):
            raise UsageError(f"{where}: compat.{key} must be true or false, got {value!r}")
    elif key == "extra_body":
        if not isinstance(value, dict):
            raise UsageError(f"{where}: compat.extra_body must be an object")
    elif key == "text_tool_call_fallback":
        if not isinstance(value, list | tuple) or any(v not in FALLBACKS for v in value):
            raise UsageError(f"{where}: compat.text_tool_call_fallback must be a list of "
                             f"{', '.join(FALLBACKS)}")
    else:
        known = ", ".join(sorted([*CHOICES, *BOOLEANS, "send_reasoning", "extra_body",
                                  "text_tool_call_fallback"]))
        raise UsageError(f"{where}: unknown compat key {key!r} (known: {known})")


PRESETS: dict[str, Compat] = {
    "generic": Compat("generic"),
    # OpenAI requires max_completion_tokens for its reasoning models and accepts it for all.
    "openai": Compat("openai", max_tokens_field="max_completion_tokens", think_tags=False,
                     allow_missing_done=False),
    "vllm": Compat("vllm"),
    "llamacpp": Compat("llamacpp", tool_then_user="ok"),
    "ollama": Compat("ollama"),
    "lmstudio": Compat("lmstudio"),
    "sglang": Compat("sglang"),
    "openrouter": Compat("openrouter", reasoning_echo_field="reasoning"),
    "litellm": Compat("litellm"),
    # DeepSeek's thinking mode wants reasoning_content back on tool turns; it rejects
    # content arrays and images in some versions.
    "deepseek": Compat("deepseek", reasoning_echo="tool_turns", vision=False),
    "dashscope": Compat("dashscope"),
    "moonshot": Compat("moonshot", reasoning_echo="tool_turns"),
    "zhipu": Compat("zhipu"),
    # Groq rejects any unknown key, reasoning fields included.
    "groq": Compat("groq", send_reasoning=False, stream_usage="include_usage"),
    "together": Compat("together"),
    "fireworks": Compat("fireworks"),
}


def compat_for(preset: str | None, overrides: Mapping[str, Any] | None, where: str) -> Compat:
    base = PRESETS.get(preset or "generic")
    if base is None:
        raise UsageError(f"{where}: unknown preset {preset!r} (known: "
                         f"{', '.join(sorted(PRESETS))})")
    return base.with_overrides(overrides or {}, where) if overrides else base


def guess_preset(base_url: str) -> str:
    """The preset for a well-known endpoint when settings name none."""
    hosts = {"api.openai.com": "openai", "openrouter.ai": "openrouter",
             "api.deepseek.com": "deepseek", "api.groq.com": "groq",
             "api.together.xyz": "together", "api.fireworks.ai": "fireworks",
             "dashscope": "dashscope", "api.moonshot": "moonshot", "bigmodel.cn": "zhipu"}
    for host, preset in hosts.items():
        if host in base_url:
            return preset
    return "generic"
