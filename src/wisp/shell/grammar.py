"""The tree-sitter bash grammar, loaded once on first use (never at start-up)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Parser

_parser: Parser | None = None


def parser() -> Parser:
    global _parser
    if _parser is None:
        from tree_sitter import Language, Parser

        _parser = Parser(Language(_load_language()))
    return _parser


def _load_language() -> Any:
    """The bash grammar, loading only the compiled extension: importing the package runs
    an `__init__` that pulls in importlib.resources (~40 ms)."""
    try:
        path = _binding_path()
        if path is not None:
            loader = importlib.machinery.ExtensionFileLoader("tree_sitter_bash._binding", path)
            spec = importlib.util.spec_from_file_location(loader.name, path, loader=loader)
            if spec is not None:
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
                return module.language()
    except (ImportError, OSError, AttributeError):
        pass
    import tree_sitter_bash

    return tree_sitter_bash.language()


def _binding_path() -> str | None:
    """Where the package's compiled `_binding` extension is, found without importing it."""
    spec = importlib.util.find_spec("tree_sitter_bash")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for entry in sorted(os.listdir(folder)):
            if entry.startswith("_binding.") and entry.endswith((".so", ".pyd")):
                return os.path.join(folder, entry)
    return None
