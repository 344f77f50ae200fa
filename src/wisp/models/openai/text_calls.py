"""Tool calls a server wrote into the text (quirk 11): a template without tool support,
`tool_choice: required` on LM Studio, Ollama templates. Read only when a provider's
`text_tool_call_fallback` asks for it and no native `tool_calls` came; otherwise wisp only
warns once, since the fix is usually a server flag (`--jinja`, `--enable-auto-tool-choice
--tool-call-parser …`)."""

from __future__ import annotations

import json
import re

from wisp.jsontypes import JSON

_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_QWEN = re.compile(r"<function=([\w.-]+)>(.*?)</function>", re.DOTALL)
_QWEN_PARAM = re.compile(r"<parameter=([\w.-]+)>\s*(.*?)\s*</parameter>", re.DOTALL)
LOOKS_LIKE_A_CALL = re.compile(r"<tool_call>|<function=")


def parse(text: str, formats: tuple[str, ...]) -> tuple[str, list[tuple[str, JSON]]]:
    """(the text without the calls, [(name, input)]) by the first format that finds any."""
    for fmt in formats:
        found = _FORMATS[fmt](text)
        if found is not None:
            return found
    return text, []


def _hermes(text: str) -> tuple[str, list[tuple[str, JSON]]] | None:
    calls = []
    for match in _HERMES.finditer(text):
        try:
            data = json.loads(match.group(1))
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            args = data.get("arguments", data.get("parameters", {}))
            calls.append((data["name"], args if isinstance(args, dict) else {}))
    return (_HERMES.sub("", text).strip(), calls) if calls else None


def _qwen(text: str) -> tuple[str, list[tuple[str, JSON]]] | None:
    calls = []
    for match in _QWEN.finditer(text):
        params: JSON = {}
        for name, value in _QWEN_PARAM.findall(match.group(2)):
            try:
                params[name] = json.loads(value)
            except ValueError:
                params[name] = value
        calls.append((match.group(1), params))
    if not calls:
        return None
    stripped = re.sub(r"</?tool_call>", "", _QWEN.sub("", text))
    return stripped.strip(), calls


def _json(text: str) -> tuple[str, list[tuple[str, JSON]]] | None:
    try:
        data = json.loads(text.strip())
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    calls = []
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)):
            return None
        args = item.get("arguments", item.get("parameters", {}))
        calls.append((item["name"], args if isinstance(args, dict) else {}))
    return ("", calls) if calls else None


_FORMATS = {"hermes_xml": _hermes, "qwen_xml": _qwen, "json": _json}
