"""Files as an editor holds them: the file tools read and write through this when a front
end connects one (`wisp acp` with a client that offers `fs/read_text_file` and
`fs/write_text_file`), so an unsaved buffer is what the model reads and an edit lands in
the editor, where the user sees it and can undo it.

Above: Read, Write and Edit (`ToolContext.files`). Below: the front end's client
connection. A leaf: it imports nothing of wisp.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class EditorFiles(Protocol):
    async def read(self, path: Path) -> str:
        """The file's text as the editor has it (an unsaved buffer wins over the disk).
        Raises OSError when the editor cannot read it."""
        ...

    async def write(self, path: Path, text: str) -> None:
        """Replaces the file's text in the editor. Raises OSError when it refuses."""
        ...
