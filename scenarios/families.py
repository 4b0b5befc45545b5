"""The fault families' vocabulary: their names, the kinds each fires with, the range and meaning of a
fault's value, and the limits those ranges come from. Declared once here; the schema, the world's
fault plan, the explorers and the strategies read it."""

from __future__ import annotations

from typing import Literal, get_args

from model.constants import LEASE_S
from model.errors import shown

MAX_SECONDS = 10_000_000.0
"""The longest duration a scenario may write (about 116 days): far past any chaos phase."""

MAX_SKEW_S = 3600.0
"""Clock skew up to one hour either way: an NTP step after a long partition, a VM restored from a
snapshot or a host whose time zone handling is wrong all move a clock by minutes to an hour; a
lease is 15 minutes, so a search capped below a lease length never tries a reaper that sees a live
lease as stale (or a worker that sees a stale lease as live)."""
MAX_STORE_DELAY_S = 2.0 * LEASE_S
"""Store commit delays up to twice the lease length: lock waits behind a long transaction, a
replica failover, a stalled disk flush reach minutes in production; a statement that outlives the
lease is what lets a reaper act between a segment's statements, so the range must cross LEASE_S."""
MAX_LEASE_FACTOR = 100.0
"""A slow call lasts at most 100 leases (25 hours): every reaper and requeue path is long past."""

FamilyName = Literal[
    "audit",
    "store",
    "crash",
    "slow",
    "duplicate",
    "dispatch",
    "clock_skew",
    "identity",
    "cancel",
    "provider",
    "deploy",
]
FAMILIES: tuple[str, ...] = get_args(FamilyName)


FailureClassName = Literal[
    "connection",
    "rateLimit",
    "serverError",
    "circuitOpen",
    "auth",
    "configuration",
    "clientError",
    "unknown",
    "fallbackServerError",
    "status0",
    "status302",
    "status399",
    "status400",
    "status401",
    "status403",
    "status404",
    "status429",
    "status499",
    "status500",
    "status599",
    "status600",
    "authStatus500",
    "rateLimitStatus400",
    "network",
    "unsupportedFeature",
    "providerBase",
    "fallbackEmpty",
    "fallbackNested",
    "fallbackLastAuth",
]
"""A provider failure by its true class (spec 4's taxonomy), then the edges of spec 4's mapping: ``statusN`` a
``ProviderResponseException`` with HTTP status N; ``authStatus500`` / ``rateLimitStatus400`` the subclasses
with a status their name does not say (classified by the code); ``network`` a PSR-18 network error;
``unsupportedFeature`` and ``providerBase`` exceptions no rule names; ``fallbackEmpty`` a chain with no
attempt, ``fallbackNested`` a chain whose last attempt is a chain ending in a 429, ``fallbackLastAuth`` a
chain of three (503, 429, then 401) whose last attempt answered 401."""
FAILURE_CLASSES: tuple[str, ...] = get_args(FailureClassName)
FAULT_KINDS: dict[str, tuple[str, ...]] = {
    "audit": ("fire",),
    "store": ("fail", "slow"),
    "crash": ("before", "after"),
    "slow": ("stretch", "hang_then_error"),
    "duplicate": ("twice",),
    "dispatch": ("fire",),
    "clock_skew": ("offset",),
    "identity": ("fire",),
    "cancel": ("fire",),
    "provider": FAILURE_CLASSES,
    "deploy": ("rename", "remove"),
}
"""Every kind each fault family can fire with (the first is its default)."""

FAULT_VALUES: dict[str, tuple[float, float, str]] = {
    "audit": (0.0, 0.0, ""),
    "store": (0.0, MAX_STORE_DELAY_S, "seconds a slow statement waits"),
    "crash": (0.0, 0.0, ""),
    "slow": (0.0, MAX_LEASE_FACTOR, "the call's length in leases"),
    "duplicate": (0.0, MAX_SECONDS, "seconds until the copy"),
    "dispatch": (0.0, 0.0, ""),
    "clock_skew": (-MAX_SKEW_S, MAX_SKEW_S, "clock offset in seconds"),
    "identity": (0.0, 1.0, "which process, as a fraction"),
    "cancel": (0.0, 0.0, ""),
    "provider": (0.0, 0.0, ""),
    "deploy": (0.0, 1.0, "which tool, as a fraction"),
}
"""Per family, the range of a fault's ``value`` and what it means ("" and [0, 0]: the family takes no
value). The ranges are the schema's own: any fault a valid profile can draw fits, and is written back."""


def fault_value_problem(family: str, value: float) -> str | None:
    """Why ``value`` cannot be a ``family`` fault's value (NaN, infinite, out of range), or None."""
    low, high, meaning = FAULT_VALUES[family]
    if low <= value <= high:
        return None
    if not meaning:
        return f"{family} takes no value: write 0 or leave it out, not {shown(value)}"
    return f"{family} value ({meaning}) must be from {low:g} to {high:g}, not {shown(value)}"
