"""The one error base class for bad user input, shared by every layer, and the shape of its one line.

A :class:`LeaselabError` is what the CLI turns into a one-line message and exit code 2:
it says what is wrong, where (file and field when known) and how to fix it.
Harness bugs are not LeaselabErrors; they crash loudly.

The CLI's line is short by construction, not by luck: it prints ``leaselab: <line>`` and the
whole must stay under :data:`MAX_LINE_CHARS`, so :meth:`LeaselabError.one_line` keeps the end
of a long path, the ends of a long field, and drops the hint before it cuts what is wrong.
Values a user wrote are echoed through :func:`shown`, lists of choices through :func:`choices`.
Knows nothing of the CLI beyond the length of its prefix.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_LINE_CHARS = 199
"""The longest line a bad input may print on stderr, ``leaselab: `` included (the contract: under 200)."""
CLI_PREFIX_CHARS = len("leaselab: ")
MAX_MESSAGE_CHARS = MAX_LINE_CHARS - CLI_PREFIX_CHARS
MAX_FILE_CHARS = 100
MAX_FIELD_CHARS = 40
MAX_WHAT_CHARS = 120
MIN_FILE_CHARS = 40


def clamp(text: str, limit: int) -> str:
    """``text`` on one line (whitespace collapsed) and at most ``limit`` characters, cut with '...'."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 3)].rstrip() + "..."


def _keep_end(text: str, limit: int) -> str:
    """A long path keeps its end, where the file's own name is: ``.../findings/F-01.toml``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else "..." + flat[-(limit - 3) :]


def _keep_ends(text: str, limit: int) -> str:
    """A long field keeps both ends: the table it is in and the key that is wrong."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = (limit - 3) // 2
    return flat[:head] + "..." + flat[-(limit - 3 - head) :]


def shown(value: object, limit: int = 32) -> str:
    """A value a user wrote, as it would be quoted in a message, never longer than ``limit``."""
    text = f"'{value}'" if isinstance(value, str) else repr(value)
    if isinstance(value, bool):
        text = "true" if value else "false"
    return clamp(text, limit)


def choices(names: Iterable[str], *, limit: int = 80, see: str = "") -> str:
    """``a, b, c`` when it fits in ``limit`` characters, else the first few, how many in all and
    where the whole list is (``see``): a message names what is allowed without becoming a page."""
    items = list(names)
    whole = ", ".join(items)
    if len(whole) <= limit:
        return whole
    tail = f", ... ({len(items)} in all" + (f"; {see})" if see else ")")
    shown_items: list[str] = []
    for name in items:
        if len(", ".join([*shown_items, name])) + len(tail) > limit:
            break
        shown_items.append(name)
    return ", ".join(shown_items) + tail


def unknown_name(kind: str, value: str, names: Iterable[str], *, see: str) -> tuple[str, str]:
    """(what, hint) for a name that is not one of ``names``: what names the closest valid one, if any
    is close (kept before anything is cut), the hint says where all are listed (``see``)."""
    items = list(names)
    close = difflib.get_close_matches(value, items, n=1)
    what = f"unknown {kind} {shown(value)}" + (f"; did you mean '{close[0]}'?" if close else "")
    return what, f"{len(items)} in all: {see}"


class LeaselabError(Exception):
    """Bad input: a malformed scenario, an unknown policy or flag, a bad option value.

    ``str(error)`` is the whole message (a caller of the library loses nothing); the CLI prints
    :meth:`one_line`, the same message fitted under :data:`MAX_MESSAGE_CHARS`.
    """

    def __init__(self, what: str, *, file: str = "", field: str = "", hint: str = "") -> None:
        self.what = what
        self.file = file
        self.field = field
        self.hint = hint
        super().__init__(_compose(self.file, self.field, self.what, self.hint))

    def one_line(self, limit: int = MAX_MESSAGE_CHARS) -> str:
        """``file: field: what (hint)`` in at most ``limit`` characters, whitespace collapsed.

        What is wrong is kept whole (up to :data:`MAX_WHAT_CHARS`) and the field keeps its ends. A
        file name up to :data:`MAX_FILE_CHARS` is kept whole and the hint goes if there is no room;
        a longer one (a shard deep in a sweep directory) keeps its end, down to
        :data:`MIN_FILE_CHARS`, to make room for the hint. Without the hint, the file keeps its
        end to leave what is wrong whole; only past that is what is wrong cut.
        """
        field = _keep_ends(self.field, MAX_FIELD_CHARS)
        what = clamp(self.what, MAX_WHAT_CHARS)
        file = " ".join(self.file.split())
        for hint in (self.hint, ""):
            room = limit - len(_compose("", field, what, hint)) - (2 if file else 0)
            if len(file) <= room:
                return _compose(file, field, what, hint)
            if room >= MIN_FILE_CHARS and (len(file) > MAX_FILE_CHARS or not hint):
                return _compose(_keep_end(file, room), field, what, hint)
        head = _compose(_keep_end(file, MIN_FILE_CHARS), field, "", "")
        return _compose(head, "", clamp(what, limit - len(head) - 2), "")


def _compose(file: str, field: str, what: str, hint: str) -> str:
    text = ": ".join(p for p in (" ".join(part.split()) for part in (file, field, what)) if p)
    hint = " ".join(hint.split())
    return f"{text} ({hint})".lstrip() if hint else text
