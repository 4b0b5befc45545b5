"""The one error base class for bad user input, shared by every layer.

A :class:`LeaselabError` is what the CLI turns into a one-line message and exit code 2:
it says what is wrong, where (file and field when known) and how to fix it.
Harness bugs are not LeaselabErrors; they crash loudly.
"""

from __future__ import annotations


class LeaselabError(Exception):
    """Bad input: a malformed scenario, an unknown policy or flag, a bad option value."""

    def __init__(self, what: str, *, file: str = "", field: str = "", hint: str = "") -> None:
        self.what = what
        self.file = file
        self.field = field
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ": ".join(p for p in (self.file, self.field) if p)
        text = f"{where}: {self.what}" if where else self.what
        return f"{text} ({self.hint})" if self.hint else text
