"""Which provider serves a model spec, and the one `Model` that routes each request.

A spec is `<provider>:<model>` or a bare model name:

- a bare name, or `anthropic:<name>`: the Anthropic Messages API (today's behaviour);
- `openai:<name>`: an OpenAI-compatible server at `OPENAI_BASE_URL` (default
  `https://api.openai.com/v1`) with `OPENAI_API_KEY`;
- `<name>:<model>` where settings define `providers.<name>`: that provider, e.g.
  `"providers": {"local": {"type": "openai", "base_url": "http://127.0.0.1:8080/v1",
  "api_key_env": "LOCAL_KEY", "preset": "llamacpp", "models": {"qwen3-coder":
  {"context_window": 131072, "input_per_mtok": 0, "output_per_mtok": 0}}}}`.

Anything else with a colon (`qwen3:8b`) is a bare name. Routing per request, not per
session, is what lets `set_model`, `--fallback-model` and subagents switch providers
mid-session. The OpenAI-compatible provider is imported the first time it is needed, so
the Anthropic path pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wisp.errors import MissingCredentials, UsageError
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.models.base import Model, ModelRequest, ModelStream
from wisp.models.spec import key_origin, missing_credentials, refused_note, split_spec
from wisp.values import replace

DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"


class ProviderEntry:
    """One provider: where it is, how to authenticate, which preset, and its models.
    `url_setting` names what set `base_url` (None: the built-in default) and
    `refused` what a 401 adds about the key, for errors a user can act on."""

    __slots__ = ("api_key", "base_url", "compat", "from_settings", "headers", "kind",
                 "models", "name", "preset", "refused", "url_setting")

    def __init__(self, name: str, kind: str, base_url: str, api_key: str | None, *,
                 preset: str | None = None, compat: JSON | None = None,
                 headers: Mapping[str, str] | None = None, models: JSON | None = None,
                 url_setting: str | None = None, refused: str = "") -> None:
        self.name = name
        self.kind = kind
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.preset = preset
        self.compat = compat or {}
        self.headers = dict(headers or {})
        self.models: JSON = models or {}
        self.url_setting = url_setting
        self.refused = refused
        self.from_settings = False

    def model_entry(self, model: str) -> JSON:
        entry = self.models.get(model)
        return entry if isinstance(entry, dict) else {}


def provider_entries(settings_value: Any, env: Mapping[str, str], *,
                     set_by: Mapping[str, str] | None = None,
                     origin: str | None = None) -> dict[str, ProviderEntry]:
    """Settings' `providers`, plus the built-in `openai` from the environment. A settings
    entry named `openai` replaces the built-in one. `set_by`: the settings file whose
    `env` set a variable; `origin`: the file `providers` came from (both for messages)."""
    refused = refused_note(key_origin(("OPENAI_API_KEY",), env, set_by or {}), "OPENAI_API_KEY")
    entries = {"openai": ProviderEntry(
        "openai", "openai", env.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE,
        env.get("OPENAI_API_KEY"), preset=env.get("WISP_OPENAI_PRESET"),
        url_setting="OPENAI_BASE_URL" if env.get("OPENAI_BASE_URL") else None,
        refused=refused)}
    if not isinstance(settings_value, dict):
        return entries
    for name, raw in settings_value.items():
        entries[str(name)] = _entry(str(name), raw, env, origin)
    return entries


def _key_note(name: str, key_env: object, key: str | None, in_file: str) -> str:
    """What a 401 from a settings provider adds: the variable its key came from."""
    named = f"providers.{name}.api_key_env{in_file}"
    if not isinstance(key_env, str):
        return f"no API key was sent: {named} is not set"
    if not key:
        return f"no API key was sent: {key_env} (named by {named}) is not set"
    return f"the API key from {key_env} (named by {named}) was refused"


def _entry(name: str, raw: Any, env: Mapping[str, str], origin: str | None = None
           ) -> ProviderEntry:
    where = f"settings providers.{name}"
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be an object")
    kind = raw.get("type", "openai")
    if kind != "openai":
        raise UsageError(f"{where}.type must be \"openai\" (got {kind!r})")
    base_url = raw.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise UsageError(f"{where}.base_url must be an http(s) URL")
    key_env = raw.get("api_key_env")
    key = env.get(key_env) if isinstance(key_env, str) else None
    headers = raw.get("headers") if isinstance(raw.get("headers"), dict) else {}
    models = raw.get("models") if isinstance(raw.get("models"), dict) else {}
    in_file = f" in {origin}" if origin else ""
    entry = ProviderEntry(name, "openai", base_url, key, preset=raw.get("preset"),
                          compat=raw.get("compat"), headers=headers, models=models,
                          url_setting=f"providers.{name}.base_url{in_file}",
                          refused=_key_note(name, key_env, key, in_file))
    entry.from_settings = True
    from wisp.models.openai.presets import compat_for

    compat_for(entry.preset, entry.compat, where)  # a bad preset or key fails now
    return entry


def register_facts(entries: Mapping[str, ProviderEntry]) -> None:
    """Context windows, output caps and prices from settings, for the catalog."""
    for entry in entries.values():
        catalog.PROVIDER_NAMES.add(entry.name)
        for model, facts in entry.models.items():
            if isinstance(facts, dict):
                catalog.register_model(f"{entry.name}:{model}", _facts(facts))


def _facts(raw: JSON) -> catalog.ModelFacts:
    def number(key: str) -> float | None:
        value = raw.get(key)
        return float(value) if isinstance(value, int | float) else None

    inp, out = number("input_per_mtok"), number("output_per_mtok")
    price = None if inp is None and out is None else catalog.Price(
        inp or 0.0, out or 0.0, number("cache_write_per_mtok") or inp or 0.0,
        number("cache_read_per_mtok") or inp or 0.0)
    window, cap = number("context_window"), number("max_output_tokens")
    return catalog.ModelFacts(price, int(window) if window else None, int(cap) if cap else None)


def without_foreign_thinking(messages: list[JSON]) -> list[JSON]:
    """Thinking blocks another provider produced carry no signature, and the Messages API
    rejects them: they stay in the session's history but are not sent. Messages without
    any are passed as the same objects (the body encoder caches them by identity)."""
    return [_signed_only(message) for message in messages]


def _unsigned(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "thinking" and not block.get(
        "signature")


def _signed_only(message: JSON) -> JSON:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list) or not any(
            map(_unsigned, content)):
        return message
    kept = [b for b in content if not _unsigned(b)]
    return {**message, "content": kept or [{"type": "text", "text": "(thinking)"}]}


class RoutingModel:
    """The session's `Model`: each request goes to the provider its spec names, with the
    provider prefix taken off the model name."""

    def __init__(self, anthropic: Any, entries: Mapping[str, ProviderEntry],
                 environ: Mapping[str, str]) -> None:
        self._make_anthropic = anthropic  # () -> Model, made on first use
        self._anthropic: Model | None = None
        self.entries = entries
        self.environ = environ
        self._others: dict[str, Model] = {}
        # Only settings' own: a built-in `openai` without key or URL must still be refused.
        self._named = {name for name, entry in entries.items() if entry.from_settings}

    def stream(self, request: ModelRequest) -> ModelStream:
        missing = missing_credentials(request.model, self.environ, self._named)
        if missing is not None:  # nothing would answer: say what to set, send nothing
            raise MissingCredentials(missing)
        provider, name = split_spec(request.model, self.entries)
        if provider == "anthropic":
            if self._anthropic is None:
                self._anthropic = self._make_anthropic()
            bare = request if name == request.model else replace(request, model=name)
            if self._others:  # the session used another provider: its history may need care
                bare = replace(bare, messages=without_foreign_thinking(bare.messages))
            return self._anthropic.stream(bare)
        return self._other(provider).stream(replace(request, model=name))

    def warm(self, request: ModelRequest) -> None:
        """Get ready to send `request` (the session's next one, less its prompt) without
        sending it: the Anthropic provider made and the request's body encoded once, so
        the first turn does not pay for either. Other providers are left alone."""
        if missing_credentials(request.model, self.environ, self._named) is not None:
            return
        provider, name = split_spec(request.model, self.entries)
        if provider != "anthropic":
            return
        if self._anthropic is None:
            self._anthropic = self._make_anthropic()
        warm = getattr(self._anthropic, "warm", None)  # a test double may not have it
        if callable(warm):
            warm(request if name == request.model else replace(request, model=name))

    def environment_changed(self) -> None:
        """The session's environment changed (a host's `update_environment_variables`):
        the Anthropic provider is made again on the next request, from the new key, token,
        base URL and proxy. Its connections are left to close as it is dropped."""
        self._anthropic = None

    def _other(self, provider: str) -> Model:
        model = self._others.get(provider)
        if model is None:
            from wisp.models.openai.provider import OpenAICompatModel

            model = self._others[provider] = OpenAICompatModel(self.entries[provider],
                                                               self.environ)
        return model

    async def aclose(self) -> None:
        for model in [self._anthropic, *self._others.values()]:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
