"""`sandbox` in settings: validation, merging across sources, and what a repository's own
settings may not loosen. Real settings files in a real folder, loaded by the loader."""

from __future__ import annotations

import json
from pathlib import Path

from wisp.sandbox.config import sandbox_config, sandbox_enabled
from wisp.settings.loader import load_settings
from wisp.settings.sandbox_schema import check_sandbox


def write(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def load(work: Path, home: Path, flag: object | None = None, *, trusted: bool = True):
    """The settings wisp would load in `work`; the folder trusted unless `trusted` is
    false (an untrusted folder's settings may only restrict: `wisp.settings.untrusted`)."""
    env = {"HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp"),
           **({"WISP_TRUST_PROJECT": "1"} if trusted else {})}
    return load_settings(work, env, selected=None,
                         flag=json.dumps(flag) if flag is not None else None)


def test_every_field_of_the_seed_validates():
    doc = {"enabled": True, "autoAllowBashIfSandboxed": True, "excludedCommands": ["docker"],
           "allowUnsandboxedCommands": False, "enableWeakerNestedSandbox": False,
           "network": {"allowLocalBinding": True, "allowUnixSockets": ["/run/x.sock"],
                       "allowAllUnixSockets": False, "httpProxyPort": 8080,
                       "socksProxyPort": 1080},
           "ignoreViolations": {"file": ["/etc/hosts"], "network": ["example.com"]},
           "filesystem": {"allowRead": ["~/.aws"]}, "limits": {"processes": 10}}
    assert check_sandbox(doc) == []


def test_bad_values_are_named():
    problems = check_sandbox({"enabled": "yes", "network": {"httpProxyPort": 70000},
                              "excludedCommands": "docker", "ignoreViolations": []})
    assert problems == ["sandbox.enabled must be true or false",
                        "sandbox.excludedCommands must be a list of strings",
                        "sandbox.network.httpProxyPort must be a port number",
                        "sandbox.ignoreViolations must be an object of string lists"]


def test_a_file_skipped_for_a_bad_value_still_turns_the_sandbox_on(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    write(work / ".claude" / "settings.json",
          {"sandbox": {"enabled": True, "network": {"httpProxyPort": "x"}}})
    settings = load(work, home)
    assert settings.sources == [] and settings.errors
    assert sandbox_enabled(settings)


def test_sources_merge_scalars_by_rank_and_join_lists(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    write(home / ".wisp" / "settings.json",
          {"sandbox": {"enabled": True, "excludedCommands": ["docker"],
                       "ignoreViolations": {"*": ["/etc/hosts"]}}})
    write(work / ".claude" / "settings.json",
          {"sandbox": {"autoAllowBashIfSandboxed": True,
                       "filesystem": {"denyRead": ["./private"]}}})
    config = sandbox_config(load(work, home, flag={"sandbox": {"excludedCommands": ["git"],
                                                               "enabled": True}}))
    assert config.enabled and config.auto_allow
    assert config.excluded_commands == ("docker", "git")
    assert config.deny_read == ("./private",)
    assert config.ignore_violations == {"*": ("/etc/hosts",)}


def test_a_repository_cannot_loosen_its_own_sandbox(tmp_path, capfd):
    work, home = tmp_path / "work", tmp_path / "home"
    loosen = {"enabled": True, "excludedCommands": ["*"],
              "filesystem": {"allowRead": ["~/.ssh"], "allowWrite": ["/"]},
              "network": {"allowAllUnixSockets": True, "allowedDomains": ["evil.test"]},
              "enableWeakerNestedSandbox": True}
    write(work / ".claude" / "settings.json", {"sandbox": loosen})
    write(work / ".claude" / "settings.local.json", {"sandbox": {"excludedCommands": ["sh"]}})
    config = sandbox_config(load(work, home))
    assert config.enabled  # tightening is welcome from anywhere
    assert config.excluded_commands == () and config.allow_read == () \
        and config.allow_write == ()
    assert not config.network.allow_all_unix_sockets and config.network.allowed_domains == ()
    assert not config.weaker_nested
    assert len(config.dropped) == 7
    write(work / ".claude" / "settings.json", {"sandbox": {"allowUnsandboxedCommands": True}})
    write(home / ".wisp" / "settings.json", {"sandbox": {"enabled": True,
                                                         "allowUnsandboxedCommands": False}})
    assert sandbox_config(load(work, home)).allow_unsandboxed is False
    from wisp.sandbox.config import warn_about

    warn_about(config)
    assert "only user settings and --settings may loosen" in capfd.readouterr().err


def test_an_untrusted_folder_may_turn_its_sandbox_on_and_tighten_it(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    write(work / ".claude" / "settings.json", {"sandbox": {
        "enabled": True, "autoAllowBashIfSandboxed": True, "allowUnsandboxedCommands": False,
        "excludedCommands": ["sh"], "filesystem": {"denyRead": ["./private"],
                                                   "allowWrite": ["/"]},
        "network": {"deniedDomains": ["evil.test"], "allowedDomains": ["evil.test"]}}})
    settings = load(work, home, trusted=False)
    config = sandbox_config(settings)
    assert config.enabled and not config.auto_allow and config.allow_unsandboxed is False
    assert config.deny_read == ("./private",) and config.allow_write == ()
    assert config.excluded_commands == () and config.network.allowed_domains == ()
    assert config.network.denied_domains == ("evil.test",)
    [(_, held)] = settings.held_back
    assert "sandbox.autoAllowBashIfSandboxed" in held and "sandbox.excludedCommands" in held


def test_user_settings_and_the_flag_may_loosen(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    write(home / ".wisp" / "settings.json",
          {"sandbox": {"filesystem": {"allowRead": ["~/.aws"]}}})
    config = sandbox_config(load(work, home, flag={"sandbox": {
        "enabled": True, "network": {"allowedDomains": ["pypi.org"]}}}))
    assert config.allow_read == ("~/.aws",)
    assert config.network.allowed_domains == ("pypi.org",)
    assert config.dropped == []


def test_off_unless_some_source_turns_it_on(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    assert not sandbox_enabled(load(work, home))
    write(home / ".wisp" / "settings.json", {"sandbox": {"enabled": True}})
    assert sandbox_enabled(load(work, home))
    write(work / ".claude" / "settings.local.json", {"sandbox": {"enabled": False}})
    assert sandbox_enabled(load(work, home))  # a repository cannot switch it off
    write(home / ".wisp" / "settings.json", {})
    assert not sandbox_enabled(load(work, home))
    assert not sandbox_enabled(load(work, home, flag={"sandbox": {"enabled": False}}))
    write(home / ".wisp" / "settings.json", {"sandbox": {"enabled": True}})
    assert not sandbox_enabled(load(work, home, flag={"sandbox": {"enabled": False}}))
