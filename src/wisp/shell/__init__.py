"""Shell analysis for permission checks: what a Bash command line runs and which paths it
reads and writes, from a real bash grammar (tree-sitter), failing closed.

`analyse()` is the entry point; the grammar loads on its first call, never at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping

from wisp.shell.model import PathUse, ShellAnalysis, SimpleCommand

__all__ = ["PathUse", "ShellAnalysis", "SimpleCommand", "analyse"]


def analyse(command: str, *, cwd: str, env: Mapping[str, str]) -> ShellAnalysis:
    """Analyse one Bash tool command. Never raises: what cannot be understood is reported
    in `ShellAnalysis.unresolved`."""
    from wisp.shell.analyser import analyse_command

    return analyse_command(command, cwd=cwd, env=env)
