"""Policies: the ADR history as named flags, and the presets that reproduce it.

A :class:`Policy` is a frozen record of boolean flags, one per mechanism an ADR added
(True = the mechanism is in place), one per historic defect of spec section 7.3
(``kbN_...``, True = the defect is switched back on), and two proposals no preset
turns on. The defaults are ``head``: the spec as written. Presets are data; adding a
flag means adding one field, one line of documentation and its value per preset.

Presets are the ADR *designs*: a preset carries a defect only where the next ADR is
the decision that removed it (KB-9 in adr-112, fixed by ADR-122; KB-10 and KB-12 in
adr-122, fixed by ADR-141 and ADR-132). The implementation defects fixed in passing
(KB-1, 2, 3, 5, 6, 7, 8, 13) are off in every preset and are switched on over the
preset of their era by the known-defect catalogue, so that comparing two presets
measures a decision, not a bug.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from model.errors import LeaselabError, unknown_name


@dataclass(frozen=True, slots=True)
class Policy:
    """One design of the runtime. Field defaults are ``head`` (ADR-141, the spec as written)."""

    # ADR-111
    typed_effects: bool = True
    fail_closed_write_audit: bool = True
    unknown_tool_is_strictest: bool = True
    # ADR-112 / ADR-122
    write_fence: bool = True
    fence_blocks_retry: bool = True
    # ADR-134 / ADR-141
    writes_require_approval: bool = True
    dead_letter_payloadless: bool = True
    # historic defects (True = the defect is back)
    kb1_finish_unguarded: bool = False
    kb2_resume_position_by_count: bool = False
    kb3_suspend_unguarded: bool = False
    kb5_persist_before_renewal: bool = False
    kb6_renew_trusts_changed_rows: bool = False
    kb7_worker_settles_unguarded: bool = False
    kb8_reaper_dispatch_failure_only_logged: bool = False
    kb9_fence_survives_requeue: bool = False
    kb10_unleased_segments: bool = False
    kb12_approval_not_audited: bool = False
    kb13_fallback_chain_unknown: bool = False
    # proposals no preset turns on
    operation_deadline: bool = False
    idempotency_keys: bool = False

    def with_flags(self, **flags: bool) -> Policy:
        for name in flags:
            _check_flag_name(name, source="")
        return dataclasses.replace(self, **flags)

    def as_dict(self) -> dict[str, bool]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def differences(self, other: Policy) -> dict[str, tuple[bool, bool]]:
        """Flags whose values differ: name -> (self's, other's)."""
        mine, theirs = self.as_dict(), other.as_dict()
        return {k: (mine[k], theirs[k]) for k in mine if mine[k] != theirs[k]}


FLAG_DOCS: Mapping[str, str] = {
    "typed_effects": "ADR-111: a ToolEffectResolver is wired; without it every tool is read_only "
    "(fence and write audit become no-ops).",
    "fail_closed_write_audit": "ADR-111: a write step whose audit event cannot be stored fails the run "
    "(AuditPersistenceFailed) instead of continuing.",
    "unknown_tool_is_strictest": "ADR-111: an unknown tool name resolves to non_idempotent_write (off: to read_only).",
    "write_fence": "ADR-112: the pre-tool hook stamps pending_effect before a write; "
    "the tool step's boundary clears it.",
    "fence_blocks_retry": "ADR-112: reaper and in-process recovery dead-letter a run whose fence "
    "reads non_idempotent_write.",
    "writes_require_approval": "ADR-134: a non-remote tool declaring a write suspends for approval before it runs.",
    "dead_letter_payloadless": "ADR-141: the reaper dead-letters a stale row with no stored request "
    "(off: requeues it, KB-11).",
    "kb1_finish_unguarded": "KB-1 (<= v0.23.0): finishRun keyed on uid only; a late settle overwrites a terminal row.",
    "kb2_resume_position_by_count": "KB-2 (v0.23.0): a resume starts at COUNT(events), at 0 when the read fails.",
    "kb3_suspend_unguarded": "KB-3 (pre-v0.23.1): suspendRun keyed on uid only; a cancelled run is "
    "resurrected to waiting.",
    "kb5_persist_before_renewal": "KB-5 (8b4248d3): the boundary persists the step before renewing, "
    "so a zombie appends events.",
    "kb6_renew_trusts_changed_rows": "KB-6 (v0.23.1): renewLease trusts MySQL changed-rows; a "
    "same-second renewal is lease lost.",
    "kb7_worker_settles_unguarded": "KB-7 (v0.23.1): worker-path settles are not owner-guarded; a "
    "reaped worker settles the new owner's row.",
    "kb8_reaper_dispatch_failure_only_logged": "KB-8 (v0.23.1): a failed reaper re-dispatch is only "
    "logged; the row stays QUEUED forever.",
    "kb9_fence_survives_requeue": "KB-9 (v0.24.0-v0.25.x): requeue does not clear pending_effect; "
    "the next attempt inherits the fence.",
    "kb10_unleased_segments": "KB-10 (v0.27.0-v0.28.x): interactive and resume segments hold no "
    "lease and their writes run unfenced.",
    "kb12_approval_not_audited": "KB-12 (pre-v0.27.0): a write turn executes though its approval "
    "was not recorded or names a stale turn.",
    "kb13_fallback_chain_unknown": "KB-13 (d088e865..9505e651): an exhausted fallback chain is "
    "classified unknown, so it dead-letters.",
    "operation_deadline": "Proposal: extend the lease to the operation's declared deadline before "
    "every provider and tool call.",
    "idempotency_keys": "Proposal: a tool-result dedup store replays a completed write; the reaper "
    "and recovery may then retry a fenced run.",
}

HEAD = Policy()

_ADR_141 = HEAD
_ADR_122 = dataclasses.replace(
    _ADR_141,
    writes_require_approval=False,
    dead_letter_payloadless=False,
    kb10_unleased_segments=True,
    kb12_approval_not_audited=True,
)
_ADR_112 = dataclasses.replace(_ADR_122, kb9_fence_survives_requeue=True)
_ADR_111 = dataclasses.replace(_ADR_112, write_fence=False, fence_blocks_retry=False, kb9_fence_survives_requeue=False)
_ADR_104 = dataclasses.replace(
    _ADR_111, typed_effects=False, fail_closed_write_audit=False, unknown_tool_is_strictest=False
)

PRESETS: Mapping[str, Policy] = {
    "adr-104": _ADR_104,
    "adr-111": _ADR_111,
    "adr-112": _ADR_112,
    "adr-122": _ADR_122,
    "adr-141": _ADR_141,
}
PRESET_ALIASES: Mapping[str, str] = {"head": "adr-141"}
PRESET_DOCS: Mapping[str, str] = {
    "adr-104": "leases, heartbeat at step boundaries, the reaper, retry per failure class; no effect classes",
    "adr-111": "+ tool effect classes, fail-closed audit for writes, unknown name is strictest",
    "adr-112": "+ the write fence and its retry refusal (KB-9 present: the fence survives a requeue)",
    "adr-122": "+ the fence is cleared on requeue (KB-9 fixed)",
    "adr-141": "+ every segment leased, unfenced writes refused, payload-less rows dead-lettered, "
    "approval audit (ADR-132/134); alias head",
}

FLAG_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Policy))


def _check_flag_name(name: str, *, source: str, field: str = "flag") -> None:
    if name not in FLAG_DOCS:
        what, hint = unknown_name("flag", name, FLAG_NAMES, see="`leaselab policies`")
        raise LeaselabError(what, file=source, field=field, hint=hint)


def preset(name: str, *, source: str = "") -> Policy:
    """The preset called ``name`` (or its alias); a LeaselabError lists the valid names."""
    key = PRESET_ALIASES.get(name, name)
    if key not in PRESETS:
        raise LeaselabError(
            f"unknown policy '{name}'",
            file=source,
            field="policy",
            hint="valid policies: " + ", ".join([*PRESETS, *PRESET_ALIASES]),
        )
    return PRESETS[key]


_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


def parse_flag_value(name: str, raw: object, *, source: str = "", field: str | None = None) -> bool:
    """A flag value from text ('on', 'true', '1' / 'off', 'false', '0') or a bool. An error names
    ``field`` (default: the flag's own name, as a file's ``[flags]`` table has it)."""
    field = field or name
    _check_flag_name(name, source=source, field=field if field.startswith("--") else "flag")
    if isinstance(raw, bool):
        return raw
    if not isinstance(raw, str):
        raise LeaselabError(
            f"flag '{name}' needs a boolean, got {raw!r}", file=source, field=field, hint="use true/false or on/off"
        )
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise LeaselabError(
        f"flag '{name}' needs a boolean, got '{raw}'", file=source, field=field, hint="use on/off or true/false"
    )


def parse_flag_assignment(text: str, *, source: str = "") -> tuple[str, bool]:
    """Parse ``NAME=VALUE`` as given to ``--flag`` (an error names ``--flag``, the option the user typed)."""
    name, sep, raw = text.partition("=")
    if not sep:
        raise LeaselabError(
            f"flag '{text}' is not NAME=VALUE", file=source, field="--flag", hint="e.g. --flag write_fence=off"
        )
    return name.strip(), parse_flag_value(name.strip(), raw, source=source, field="--flag")


def resolve_policy(policy: str | Policy, flags: Mapping[str, bool | str] | None = None) -> Policy:
    """A Policy from a preset name or a Policy, with flag overrides applied."""
    base = preset(policy) if isinstance(policy, str) else policy
    if not flags:
        return base
    return dataclasses.replace(base, **{k: parse_flag_value(k, v) for k, v in flags.items()})


def preset_name(policy: Policy) -> str | None:
    """The name of the preset equal to ``policy``, if any."""
    for name, p in PRESETS.items():
        if p == policy:
            return name
    return None
