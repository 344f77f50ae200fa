"""What a model spec names, checked before anything is sent: which provider serves it, a
provider prefix nobody defined, and a provider with neither a key nor an endpoint to ask.

A spec is `<provider>:<model>` or a bare model name (`wisp.models.route` has the whole
grammar). The providers are `anthropic`, `openai` and those settings' `providers` name.

Above: start-up in every front end (`wisp.runtime.facts.starting_model`, print mode's
early refusal, the TUI), `set_model`, and the routing model before each request.
Below: nothing but string rules, so a run can be refused before anything slow loads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

BUILT_IN = ("anthropic", "openai")
# Started with a scripted Messages API server on a free port and the variables set for it.
TRY_OFFLINE = "python -m wisp.testing.server -- wisp -p hello"
_OLLAMA_TAGS = ("latest",)


def split_spec(spec: str, providers: Collection[str]) -> tuple[str, str]:
    """(provider name, model name): `anthropic` for a bare name."""
    head, sep, rest = spec.partition(":")
    if sep and rest and (head in BUILT_IN or head in providers):
        return head, rest
    return "anthropic", spec


def looks_like_provider(head: str, tail: str) -> bool:
    """Whether `head:tail` reads as a provider prefix rather than a model id that has a
    colon of its own. Model ids keep theirs: Bedrock's `us.anthropic.claude-x-v2:0` and
    ARNs, Ollama's `qwen3:8b`, `mistral:7b`, `phi:latest` (a digit in the name, a dot, or
    a tag that is a size or `latest`). A provider name is letters, `-` and `_`."""
    if not head or not tail or head.lower() == "arn":
        return False
    if not (head.isascii() and head[0].isalpha()
            and all(c.isalpha() or c in "-_" for c in head)):
        return False
    return not (tail[0].isdigit() or tail in _OLLAMA_TAGS)


def unknown_provider(spec: str, providers: Collection[str]) -> str | None:
    """The error for a spec whose prefix looks like a provider nobody defined, else None."""
    head, _, tail = spec.partition(":")
    if head in BUILT_IN or head in providers or not looks_like_provider(head, tail):
        return None
    known = ", ".join([*BUILT_IN, *sorted(p for p in providers if p not in BUILT_IN)])
    return (f"unknown provider \"{head}\" in model \"{spec}\"; known providers: {known} "
            "(others are defined in settings \"providers\"; a model id with a colon of its "
            f"own goes to the Anthropic API as anthropic:{spec})")


def missing_credentials(spec: str, env: Mapping[str, str], providers: Collection[str], *,
                        key_helper: str | None = None) -> str | None:
    """Why the provider serving `spec` cannot be asked at all (no key and no base URL),
    naming the variable to set; None when it can. A base URL without a key is a gateway
    or a local server that may need none: never refused. Settings providers always have
    a base URL. `key_helper`: the settings file with an `apiKeyHelper`, which wisp does not
    run (said, rather than ignored in silence)."""
    provider, model = split_spec(spec, providers)
    if provider == "anthropic":
        if (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")
                or env.get("ANTHROPIC_BASE_URL") or _custom_auth(env)):
            return None
        need = ("set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for a "
                "gateway that needs no key)")
    elif provider == "openai" and provider not in providers:
        if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"):
            return None
        need = (f"set OPENAI_API_KEY for openai:{model} (or OPENAI_BASE_URL for a server "
                "that needs no key)")
    else:
        return None
    if key_helper:
        need += f"; wisp does not run the apiKeyHelper in {key_helper}"
    return f"Not logged in · {need}. To try wisp without a key: {TRY_OFFLINE}"


def _custom_auth(env: Mapping[str, str]) -> bool:
    """ANTHROPIC_CUSTOM_HEADERS carrying the credentials itself (a gateway's own header)."""
    names = {line.partition(":")[0].strip().lower()
             for line in env.get("ANTHROPIC_CUSTOM_HEADERS", "").splitlines()}
    return bool(names & {"x-api-key", "authorization"})


def key_origin(names: tuple[str, ...], env: Mapping[str, str],
               set_by: Mapping[str, str]) -> str | None:
    """Where the credentials sent came from, for a 401: the variables with a value, each
    with the settings file whose `env` set it (`set_by`), e.g. `ANTHROPIC_API_KEY (from
    env in /p/.claude/settings.json)`. None when none is set."""
    used = [name + (f" (from env in {set_by[name]})" if name in set_by else "")
            for name in names if env.get(name)]
    return " and ".join(used) or None


def refused_note(origin: str | None, unset: str) -> str:
    """What a 401 adds to the server's words: whose key was refused, or that none was sent
    (`unset`: what to set)."""
    if origin is None:
        return f"no API key was sent: set {unset}"
    return f"the API key from {origin} was refused"
