"""The table of known settings keys, against the reference's own schema, and the walk
that finds unknown keys in a settings document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.settings.dts import SDK_TYPES, reference_keys, render
from wisp.settings import known_keys
from wisp.settings.unknown_keys import KNOWN, unknown_keys


def test_the_table_is_what_the_installed_sdk_schema_says():
    """scripts/settings-keys regenerates it after an SDK bump."""
    if not SDK_TYPES.exists():
        pytest.skip("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)")
    source = known_keys.__doc__.split("interface of\n")[1].split(";")[0]
    generated = render(reference_keys(SDK_TYPES.read_text(encoding="utf-8")), source)
    assert Path(known_keys.__file__).read_text(encoding="utf-8") == generated


def test_the_table_holds_the_keys_settings_files_use_daily():
    for key in ("env", "hooks", "model", "apiKeyHelper", "statusLine", "outputStyle",
                "enabledPlugins", "enableAllProjectMcpServers", "enabledMcpjsonServers",
                "disabledMcpjsonServers", "cleanupPeriodDays", "includeCoAuthoredBy",
                "forceLoginMethod", "spinnerTipsEnabled", "alwaysThinkingEnabled",
                "companyAnnouncements", "awsAuthRefresh", "sandbox", "permissions",
                "providers", "mcpServers"):
        assert key in KNOWN, key
    assert {"allow", "deny", "ask", "defaultMode", "additionalDirectories",
            "disableBypassPermissionsMode"} <= set(KNOWN["permissions"])
    assert {"enabled", "autoAllowBashIfSandboxed", "network", "filesystem",
            "excludedCommands"} <= set(KNOWN["sandbox"])


def example(spec: Any) -> Any:
    """A value with every key `spec` knows (and one free key in each record)."""
    if isinstance(spec, list):
        return [example(spec[0])]
    if isinstance(spec, dict):
        if "*" in spec:
            return {"anything": example(spec["*"])}
        return {key: example(value) for key, value in spec.items()}
    return "x"


def test_a_document_with_every_known_key_has_no_unknown_key():
    document = example(KNOWN)
    assert len(document) == len(KNOWN) > 150
    assert unknown_keys(document) == []


@pytest.mark.parametrize(("document", "found"), [
    ({"permissions": {"alow": ["Bash"]}}, [("permissions.alow", "permissions.allow")]),
    ({"modle": "opus", "model": "opus"}, [("modle", "model")]),
    ({"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "comand": "x"}]}]}},
     [("hooks.Stop[0].hooks[0].comand", "hooks.Stop[0].hooks[0].command")]),
    ({"sandbox": {"network": {"allowedDomain": []}}},
     [("sandbox.network.allowedDomain", "sandbox.network.allowedDomains")]),
    ({"providers": {"local": {"base_ulr": "http://x"}}},
     [("providers.local.base_ulr", "providers.local.base_url")]),
    ({"zzzzzzzz": 1, "permissions": {"qqqqqq": []}}, [("zzzzzzzz", None),
                                                      ("permissions.qqqqqq", None)]),
])
def test_unknown_keys_are_found_with_the_closest_known_one(document, found):
    assert unknown_keys(document) == found


def test_free_form_places_take_any_key():
    document = {"env": {"ANY_NAME": "1"}, "enabledPlugins": {"p@m": True},
                "mcpServers": {"s": {"command": "x", "whatever": 1}},
                "hooks": {"AnyEvent": [{"hooks": []}]}, "modelOverrides": {"a": "b"},
                "attribution": False, "permissions": "not an object"}
    assert unknown_keys(document) == []
