"""A reader's shell session, for running the README's blocks in order as pasted.

Above: tests/docs/test_readme.py. Below: real bash and the real Python, in a scratch
copy of the checkout with a fresh HOME. Like a terminal a reader pastes into, the
session keeps what a block exports and where it `cd`s for the blocks after it (each bash
block ends by writing `env -0` and `pwd` to files this reads back); a Python block runs
with the `python` that the session's PATH finds. Each block runs in its own process
group; background processes it leaves (a server started with `&`) are ended by
`close()`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.docs.readme_blocks import Block, output_matches

# Variables bash sets for itself: not part of what a block exported.
_BASH_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})


@dataclass(frozen=True)
class Ran:
    block: Block
    returncode: int
    stdout: str
    stderr: str

    def report(self) -> str:
        return (f"{self.block.where} exited {self.returncode}\n--- block:\n"
                f"{self.block.text}\n--- stdout:\n{self.stdout[-4000:]}\n"
                f"--- stderr:\n{self.stderr[-4000:]}")


class Session:
    def __init__(self, scratch: Path, cwd: Path, env: dict[str, str]) -> None:
        self.scratch = scratch
        self.cwd = cwd
        self.env = env
        self._groups: list[int] = []
        self._count = 0

    def run(self, block: Block, timeout: float) -> Ran:
        self._count += 1
        base = self.scratch / "blocks" / f"{self._count:02d}-line{block.line}"
        base.parent.mkdir(exist_ok=True)
        if block.lang == "python":
            command = self._python_command(block, base)
        else:
            command = ["bash", str(self._bash_script(block, base))]
        out, err = base.with_suffix(".out"), base.with_suffix(".err")
        # Output goes to files, not pipes: a background server keeps a pipe open forever.
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(command, cwd=self.cwd, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                    start_new_session=True)
        self._groups.append(proc.pid)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_group(proc.pid)
            code = proc.wait()
        if block.lang != "python":
            self._take_state(base)
        expected = block.expected_output()
        if code == 0 and expected is not None:
            self._await_output(out, expected, proc.pid, deadline=time.monotonic() + 30)
        return Ran(block, code, out.read_text(errors="replace"),
                   err.read_text(errors="replace"))

    def close(self) -> None:
        for group in self._groups:
            _end_group(group)

    def _python_command(self, block: Block, base: Path) -> list[str]:
        script = base.with_suffix(".py")
        script.write_text(block.script() + "\n")
        python = shutil.which("python", path=self.env["PATH"])
        assert python is not None, f"no python on the session's PATH: {self.env['PATH']}"
        return [python, str(script)]

    def _bash_script(self, block: Block, base: Path) -> Path:
        script = base.with_suffix(".sh")
        state = base.with_suffix("")
        # -e and pipefail: every command of the block must succeed, not just the last.
        script.write_text(
            f"trap 'env -0 > {state}.env; pwd > {state}.cwd' EXIT\n"
            "set -e -o pipefail\n" + block.script() + "\n")
        return script

    def _take_state(self, base: Path) -> None:
        state = base.with_suffix("")
        env_file, cwd_file = Path(f"{state}.env"), Path(f"{state}.cwd")
        if env_file.exists():
            pairs = (item.split("=", 1) for item in env_file.read_text().split("\0") if item)
            self.env = {k: v for k, v in pairs if k not in _BASH_OWN}
        if cwd_file.exists():
            self.cwd = Path(cwd_file.read_text().strip())

    @staticmethod
    def _await_output(out: Path, expected: str, group: int, deadline: float) -> None:
        """A background process a block started (`server &`) may print what the README
        shows after the block's shell has exited: wait for it while the group lives."""
        while time.monotonic() < deadline and _alive(group):
            if output_matches(expected, out.read_text(errors="replace")):
                return
            time.sleep(0.05)


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _end_group(group: int, grace: float = 10) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after `grace` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
