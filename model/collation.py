"""How the production store compares an identity with ``claimed_by`` in a WHERE clause: its collation.

The owner guards of T4, T5, T7 and T11 (``claimed_by = ?``) are string comparisons the database makes,
not PHP: on MariaDB under the ``utf8mb4_unicode_ci`` collation TYPO3 creates the tables with, two
identities that differ only in case or trailing spaces are equal. One definition, read by the
simulated store (:class:`sim.world.store.Database`, the world's and ``leaselab conform``'s), the
scenario schema's ``[world] identity_collation`` and the register's recogniser of the route it opens.
Pure: the standard library only.
"""

from __future__ import annotations

import unicodedata

COLLATIONS = ("binary", "unicode_ci")
"""How the store compares ``claimed_by`` with an identity in a WHERE clause (an engine property).

``binary`` (the default, and SQLite's and PostgreSQL's behaviour): exact string equality.
``unicode_ci``: MariaDB's ``utf8mb4_unicode_ci``, the collation TYPO3 creates the tables with:
case-insensitive and PAD SPACE (trailing spaces ignored). Under it an identity that differs
from the holder's only in case or trailing spaces passes the owner guard of T4, T5, T7 and
T11; the stored value is left as it was (T7 and T11 write '' anyway). The world's
``[world] identity_collation`` and ``leaselab conform``'s MariaDB both use this one definition."""


def unicode_ci_key(text: str) -> str:
    """The comparison key of ``text`` under ``unicode_ci`` (see :data:`COLLATIONS`).

    A simplification of the collation's UCA 4.0.0 weights: exact for the printable ASCII an
    identity (``kind:hostname:pid``) is made of, where it is case folding plus PAD SPACE (MariaDB
    weighs punctuation, so ``app-1`` and ``app_1`` stay distinct, as here). Beyond ASCII it
    approximates: accents are dropped (NFKD, combining marks removed) and the text casefolded, as
    the collation's primary level mostly does; characters UCA ignores (controls) and its
    contractions are not modelled. ``leaselab conform`` checks it against a real MariaDB."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().rstrip(" ")


def collates_equal(collation: str, a: str, b: str) -> bool:
    """Whether the store under ``collation`` finds ``a = b``."""
    if collation == "binary" or a == b:
        return a == b
    return unicode_ci_key(a) == unicode_ci_key(b)


__all__ = ["COLLATIONS", "collates_equal", "unicode_ci_key"]
