"""argparse for wisp's subcommands (`wisp serve`, `python -m wisp.testing.server`), made
to fail as the main command line does: one line, exit 1, and an unknown option named
with the closest known one. argparse alone would print its usage block, exit 2, and
take `--prt` for `--port` (prefix matching hides typos until an option is added).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from wisp.suggest import closest


class StrictParser(argparse.ArgumentParser):
    def __init__(self, prog: str, description: str, epilog: str | None = None,
                 usage: str | None = None) -> None:
        # Raw text: the description and epilog hold examples whose lines must stay whole.
        super().__init__(prog=prog, description=description, epilog=epilog, usage=usage,
                         allow_abbrev=False,
                         formatter_class=argparse.RawDescriptionHelpFormatter)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(1)

    def parse_strict(self, argv: Sequence[str]) -> argparse.Namespace:
        """Parses all of `argv`; an option no argument declares is an error with a
        suggestion, a stray word an error naming it."""
        args, extra = self.parse_known_args(list(argv))
        if extra:
            self.error(self._unknown(extra[0]))
        return args

    def _unknown(self, word: str) -> str:
        if not word.startswith("-"):
            return f"unexpected argument '{word}'"
        flag = word.partition("=")[0]
        known = [s for action in self._actions for s in action.option_strings
                 if s.startswith("--")]
        guess = closest(flag, known, strip="--") if flag.startswith("--") else None
        hint = f"\n(Did you mean {guess}?)" if guess else ""
        return f"unknown option '{flag}'{hint}"
