"""The sandbox end to end through `wisp -p`: generated escape attempts in five languages
run under `autoAllowBashIfSandboxed` (so nothing is stopped by a prompt, only by the
sandbox), and their effect is checked from outside: the file, the listener, the host's
process table."""

from __future__ import annotations

import json
import socket
import threading
import uuid

import pytest

from tests.conftest import Runner, WispRun
from tests.sandbox import generated
from tests.sandbox.conftest import sandbox_settings
from tests.sandbox.helpers import gone
from wisp.testing import ScriptedServer, reply

pytestmark = pytest.mark.usefixtures("bwrap")
STREAM = ("--output-format", "stream-json", "--verbose")
SECRET = "s3cr3t-" + uuid.uuid4().hex


def run_commands(wisp: Runner, server: ScriptedServer, commands: list[str], *,
                 settings: str | None = None, args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, after=None) -> WispRun:
    """One -p session whose model runs `commands` in a row, then answers (calling
    `after(body)` when that last request arrives, while wisp is still running)."""
    def last(body):
        if after is not None:
            after(body)
        return reply.text("done")

    server.script(*[reply.tool_use("Bash", {"command": c}) for c in commands],
                  reply.dynamic(last))
    return wisp("-p", "go", "--settings", settings or sandbox_settings(), *STREAM, *args,
                env=env)


def results(run: WispRun) -> list[dict]:
    return [b for f in run.of_type("user") for b in f["message"]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def text_of(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def languages() -> list[str]:
    return [lang for lang in generated.LANGUAGES if generated.available(lang)]


def test_init_says_which_sandbox_is_in_force(wisp, server):
    server.script(reply.text("hi"))
    run = wisp("-p", "hi", "--settings", sandbox_settings(), *STREAM)
    [init] = run.of_type("system", "init")
    assert init["sandbox_enabled"] is True
    assert init["sandbox"]["mechanism"] == "bubblewrap" and init["sandbox"]["enforcing"]
    server.script(reply.text("hi"))
    [plain] = wisp("-p", "hi", *STREAM).of_type("system", "init")
    assert plain["sandbox_enabled"] is False and "sandbox" not in plain


def test_writes_outside_fail_and_writes_inside_succeed(wisp, server, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    langs = languages()
    commands = [generated.write(lang, str(outside / f"{lang}.txt"), "escaped") for lang in langs]
    commands += [generated.write(lang, str(wisp.cwd / f"{lang}.txt"), "inside") for lang in langs]
    commands += [generated.write(lang, str(wisp.home / f"{lang}.rc"), "escaped")
                 for lang in langs]
    run = run_commands(wisp, server, commands)
    assert run.result["permission_denials"] == []  # the sandbox held them, not a prompt
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not any(wisp.home.glob("*.rc"))
    for lang in langs:
        assert (wisp.cwd / f"{lang}.txt").read_text() == "inside"
    blocks = results(run)
    assert all(b["is_error"] for b in blocks[:len(langs)])
    assert "<sandbox_violations>" in text_of(blocks[0])  # python names the path


def test_masked_paths_cannot_be_read(wisp, server):
    secret_dir = wisp.cwd / "secret"
    secret_dir.mkdir()
    (secret_dir / "key.txt").write_text(SECRET)
    (wisp.cwd / ".envrc").write_text(f"export TOKEN={SECRET}\n")
    (wisp.cwd / ".claude").mkdir()
    (wisp.cwd / ".claude" / "settings.local.json").write_text(
        json.dumps({"env": {"TOKEN": SECRET}}))
    ssh = wisp.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text(SECRET)
    targets = [secret_dir / "key.txt", wisp.cwd / ".envrc",
               wisp.cwd / ".claude" / "settings.local.json", ssh / "id_ed25519"]
    commands = [generated.read(lang, str(t)) for t in targets for lang in languages()]
    settings = json.dumps({"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True},
                           "permissions": {"deny": ["Read(./secret/**)"]}})
    run = run_commands(wisp, server, commands, settings=settings)
    # A command that names a denied path in its arguments is denied by the judge first;
    # inline code hides its path from the judge, and the sandbox holds that.
    denied = [d["tool_input"]["command"] for d in run.result["permission_denials"]]
    assert all(str(secret_dir) in c for c in denied), denied
    assert len(denied) < len(languages())
    assert len(results(run)) == len(commands)
    assert SECRET not in run.stdout
    assert SECRET not in json.dumps(server.requests[-1].body)


class Listener:
    """A real TCP listener on 127.0.0.1 (or a Unix socket) that records what reaches it."""

    def __init__(self, family: int = socket.AF_INET, path: str | None = None) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(path if path else ("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1] if path is None else 0
        self.accepted: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.accepted.append(conn.recv(100) or b"<connected>")
                except OSError:
                    self.accepted.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


def test_loopback_listener_is_unreachable(wisp, server):
    listener = Listener()
    try:
        commands = [generated.tcp(lang, listener.port) for lang in languages()]
        run = run_commands(wisp, server, commands)
    finally:
        listener.close()
    assert listener.accepted == []
    assert run.result["permission_denials"] == []
    assert all(b["is_error"] for b in results(run))


def test_agent_socket_is_unreachable(wisp, server, tmp_path):
    """An ssh-agent-like socket (SSH_AUTH_SOCK) and a session bus under XDG_RUNTIME_DIR:
    their folders are hidden, so nothing reaches the listener."""
    agent_dir = tmp_path / "ssh-agent"
    agent_dir.mkdir()
    runtime = tmp_path / "run-user"
    runtime.mkdir()
    agent = Listener(socket.AF_UNIX, str(agent_dir / "agent.sock"))
    bus = Listener(socket.AF_UNIX, str(runtime / "bus"))
    try:
        commands = [c for lang in languages() for path in (agent_dir / "agent.sock",
                                                           runtime / "bus")
                    if (c := generated.unix(lang, str(path))) is not None]
        run = run_commands(wisp, server, commands,
                           env={"SSH_AUTH_SOCK": str(agent_dir / "agent.sock"),
                                "XDG_RUNTIME_DIR": str(runtime)})
    finally:
        agent.close()
        bus.close()
    assert agent.accepted == [] and bus.accepted == []
    assert len(results(run)) == len(commands)
    assert all(b["is_error"] for b in results(run))


def test_nothing_started_inside_outlives_its_command(wisp, server):
    """Checked while wisp still runs (the model's next request): a detached `sleep` left
    by each command died with its sandbox."""
    markers = {lang: f"{3000 + i}.{uuid.uuid4().int % 10**9}"
               for i, lang in enumerate(languages())}
    commands = [generated.linger(lang, marker) for lang, marker in markers.items()]
    ended: dict[str, bool] = {}

    def look(_body):
        ended.update({lang: gone(m) for lang, m in markers.items()})

    run = run_commands(wisp, server, commands, after=look)
    assert run.returncode == 0
    assert ended == {lang: True for lang in markers}


def test_dangerously_disable_sandbox_goes_to_the_permission_check(wisp, server, tmp_path):
    target = tmp_path / "unsandboxed.txt"
    call = {"command": generated.write("python", str(target), "out"),
            "dangerouslyDisableSandbox": True}
    server.script(reply.tool_use("Bash", call), reply.text("done"))
    run = wisp("-p", "go", "--settings", sandbox_settings(), *STREAM)
    assert not target.exists()
    [denial] = run.result["permission_denials"]
    assert denial["tool_input"] == call
    assert "outside the sandbox" in text_of(results(run)[0])


def test_allow_unsandboxed_false_keeps_the_command_inside(wisp, server, tmp_path):
    outside = tmp_path / "unsandboxed.txt"
    inside = wisp.cwd / "inside.txt"
    calls = [{"command": generated.write("python", str(p), "x"),
              "dangerouslyDisableSandbox": True} for p in (outside, inside)]
    server.script(*[reply.tool_use("Bash", c) for c in calls], reply.text("done"))
    run = wisp("-p", "go", "--settings", sandbox_settings(allowUnsandboxedCommands=False),
               *STREAM)
    assert run.result["permission_denials"] == []
    assert not outside.exists()
    assert inside.read_text() == "x"


def test_excluded_commands_run_outside_through_the_normal_check(wisp, server, tmp_path):
    excluded = tmp_path / "excluded.txt"
    boxed = tmp_path / "boxed.txt"
    settings = sandbox_settings(excludedCommands=["touch"])
    run = run_commands(wisp, server, [f"touch {excluded}", f"python3 -c 'open(\"{boxed}\", "
                                                           "\"w\")'"], settings=settings)
    # The excluded command is judged as ever: a write outside the folders is asked about,
    # and in -p nobody can answer.
    assert [d["tool_input"]["command"] for d in run.result["permission_denials"]] == [
        f"touch {excluded}"]
    assert not excluded.exists() and not boxed.exists()
    run = run_commands(wisp, server, [f"touch {excluded}", f"python3 -c 'open(\"{boxed}\", "
                                                           "\"w\")'"], settings=settings,
                       args=("--permission-mode", "bypassPermissions"),
                       env={"IS_SANDBOX": "1"})
    assert excluded.exists()  # outside the sandbox
    assert not boxed.exists()  # bypass changes the checks, not the sandbox


def test_background_commands_and_subagents_run_sandboxed(wisp, server, tmp_path):
    outside = tmp_path / "bg.txt"
    sub_outside = tmp_path / "sub.txt"
    server.script(
        reply.tool_use("Bash", {"command": generated.write("python", str(outside), "x"),
                                "run_in_background": True}),
        reply.tool_use("Task", {"description": "d", "prompt": "p"}),
        reply.tool_use("Bash", {"command": generated.write("perl", str(sub_outside), "x")}),
        reply.text("sub done"),
        reply.text("all done"),
        reply.text("noted"))  # the turn the background command's end wakes
    run = wisp("-p", "go", "--settings", sandbox_settings(), *STREAM)
    assert run.returncode == 0
    assert not outside.exists() and not sub_outside.exists()
    assert [r["permission_denials"] for r in run.of_type("result")] == [[], []]


def test_refused_when_nothing_can_enforce_it(wisp, server):
    target = wisp.cwd / "made.txt"
    server.script(reply.tool_use("Bash", {"command": f"touch {target}"}), reply.text("done"))
    run = wisp("-p", "go", "--settings", sandbox_settings(), *STREAM,
               "--permission-mode", "bypassPermissions",
               env={"WISP_BWRAP": "", "WISP_NO_LANDLOCK": "1", "IS_SANDBOX": "1"})
    assert not target.exists()
    [block] = results(run)
    assert block["is_error"] and "cannot run on this machine" in text_of(block)
    [init] = run.of_type("system", "init")
    assert init["sandbox"]["mechanism"] == "none" and init["sandbox"]["enforcing"] is False


@pytest.mark.usefixtures("landlock")
def test_landlock_fallback_confines_writes(wisp, server, tmp_path):
    outside = tmp_path / "ll-out.txt"
    inside = wisp.cwd / "ll-in.txt"
    listener = Listener()
    try:
        run = run_commands(wisp, server, [
            generated.write("python", str(outside), "x"),
            generated.write("node", str(inside), "in"),
            generated.tcp("perl", listener.port)],
            args=("--permission-mode", "bypassPermissions"),
            env={"WISP_BWRAP": "", "IS_SANDBOX": "1"})
    finally:
        listener.close()
    [init] = run.of_type("system", "init")
    assert init["sandbox"]["mechanism"] == "landlock"
    assert not outside.exists()
    assert inside.read_text() == "in"
    assert listener.accepted == []


def test_sandbox_check_command(wisp):
    ok = wisp("sandbox", "check", "--settings", sandbox_settings())
    assert ok.returncode == 0 and "In force:   bubblewrap" in ok.stdout
    failing = wisp("sandbox", "check", "--settings", sandbox_settings(), "--json",
                   env={"WISP_BWRAP": "", "WISP_NO_LANDLOCK": "1"})
    assert failing.returncode == 1
    assert json.loads(failing.stdout)["mechanism"] == "none"
    off = wisp("sandbox", "check", env={"WISP_BWRAP": "", "WISP_NO_LANDLOCK": "1"})
    assert off.returncode == 0 and "sandbox off" in off.stdout


def test_ignore_violations_leaves_reports_out_not_enforcement(wisp, server, tmp_path):
    quiet, loud = tmp_path / "quiet.txt", tmp_path / "loud.txt"
    commands = [generated.write("python", str(quiet), "x"),
                generated.write("python", str(loud), "x"), "touch .mcp.json"]
    settings = sandbox_settings(ignoreViolations={"file": [str(quiet)],
                                                  "touch": [".mcp.json"]})
    run = run_commands(wisp, server, commands, settings=settings)
    blocks = [text_of(b) for b in results(run)]
    assert not quiet.exists() and not loud.exists()
    assert "<sandbox_violations>" not in blocks[0]
    assert f"{loud}: outside the folders" in blocks[1]
    assert "<sandbox_violations>" not in blocks[2]
    assert not (wisp.cwd / ".mcp.json").exists()
