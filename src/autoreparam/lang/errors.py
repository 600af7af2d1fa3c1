"""Errors in a program or its data: each names the line and column and says what was expected."""

from __future__ import annotations

from autoreparam.errors import AutoreparamError
from autoreparam.lang.ir import Pos


class ProgramError(AutoreparamError, ValueError):
    """A program that cannot be parsed, checked or compiled with the data given.

    ``kind`` is one of "syntax", "name", "type", "shape", "data", "value" (a distribution's parameter out
    of its domain, found when the model first runs); ``pos`` the position at fault.
    The message reads ``<source>:<line>:<column>: <kind> error: <what>`` followed, when the source
    text is known, by the offending line and a caret under the column.
    """

    def __init__(self, kind: str, pos: Pos | None, message: str, *, source: str | None = None, path: str = "<program>"):
        self.kind = kind
        self.pos = pos or Pos()
        self.message = message
        self.path = path
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.path}:{self.pos.line}:{self.pos.column}" if self.pos.line else self.path
        text = f"{where}: {self.kind} error: {self.message}"
        if self.source and self.pos.line:
            lines = self.source.splitlines()
            if 0 < self.pos.line <= len(lines):
                line = lines[self.pos.line - 1]
                text += f"\n    {line}\n    {' ' * max(self.pos.column - 1, 0)}^"
        return text

    def located(self, source: str | None, path: str | None) -> "ProgramError":
        """The same error, rendered with the program text and file name."""
        return ProgramError(self.kind, self.pos, self.message, source=source, path=path or self.path)
