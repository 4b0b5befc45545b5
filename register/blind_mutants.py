"""Automatic mutants of the runtime that no sweep of ``head`` can see, each with the reason.

``leaselab mutants --auto`` lists every mutant the unit tests kill and the head sweep misses. Most such
survivors are a promise no invariant judged, or a path no scenario took, and the fix is an oracle or a
scenario. The ones recorded here are not: under every schedule of ``head`` the mutant behaves as the
runtime does (the code it changes is not ``head``'s behaviour, or nothing in the world ever reaches it),
or the world does not record the ground truth an oracle would need, or does not take a path a
deployment can take. The command lists them apart, with the reason. It drops from the score, as
equivalent mutants of head, only the ones recorded as behaving as head does under every input a
deployment can give ("not head", "unreachable", "same outcome") AND whose every history in the sweep
equals the unmutated tree's: a record is a claim, the identical histories are its check. An
"unrecorded" one (its behaviour differs where the history cannot show it) and a "world gap" one (a
path a deployment takes and the world does not) stay in the score: they are gaps.

A record names the mutated file and the source line before and after the mutation (stripped), so that
it survives line moves; a mutant matches when its diff removes ``before`` and adds ``after`` in that
file. Pure data and a matcher; standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BlindMutant:
    file: str
    before: str
    after: str
    kind: str
    """"not head": the code only a non-head policy runs; "unreachable": no input a deployment of head can
    give reaches it (an unused default, a method with no caller, a state head never makes); "same outcome":
    a reclassification between two failure classes the runtime treats alike; "world gap": a deployment
    can reach it and the simulated world never does (a scenario or fault family the world lacks);
    "unrecorded": the history lacks the ground truth an oracle would need."""
    reason: str


NOT_HEAD = "not head"
UNREACHABLE = "unreachable"
SAME_OUTCOME = "same outcome"
UNRECORDED = "unrecorded"
WORLD_GAP = "world gap"

BLIND: tuple[BlindMutant, ...] = (
    BlindMutant("model/transitions.py", "return _replace(row, status=RunStatus.RUNNING, claimed_by=\"\", "
                "lease_expires=0, tstamp=self.now)", "return _replace(row, status=RunStatus.RUNNING, claimed_by=\"\", "
                "lease_expires= -1, tstamp=self.now)", NOT_HEAD,
                "KB-10's unleased claim for resume (leased=False): only the presets before ADR-141 run it"),
    BlindMutant("model/resume.py", "except StoreError:", "except CosmicRayTestingException:", NOT_HEAD,
                "KB-2's COUNT(events) position (the first except of resume.py): only a policy with "
                "kb2_resume_position_by_count runs it"),
    BlindMutant("model/transitions.py", "clear_fence: bool = True", "clear_fence: bool = False", UNREACHABLE,
                "an unused default: the reaper and the recovery always pass clear_fence (KB-9's flag)"),
    BlindMutant("model/transitions.py", "leased: bool = True", "leased: bool = False", UNREACHABLE,
                "an unused default: the resume always passes leased (KB-10's flag)"),
    BlindMutant("model/constants.py", "REAPER_DEFAULT_LIMIT = 50", "REAPER_DEFAULT_LIMIT = 51", WORLD_GAP,
                "an unused default: the world's reaper always passes the scenario's limit"),
    BlindMutant("model/reaper.py", "return ReapReport(exit_code=2)", "return ReapReport(exit_code= 3)", WORLD_GAP,
                "the world's reaper is always given a valid --limit, so the INVALID exit is never reached"),
    BlindMutant("model/vocab.py", "return self is TerminationReason.PROVIDER_FAILED",
                "return self < TerminationReason.PROVIDER_FAILED", UNREACHABLE,
                "TerminationReason.is_retryable has no caller in the runtime (recovery classifies the failure)"),
    BlindMutant("model/entrypoints.py", "return False", "return True", WORLD_GAP,
                "cancel's failure returns (an unreadable or missing row, a failed T8): the world's user cancels "
                "only runs the store holds, with no store fault"),
    BlindMutant("model/transitions.py", "return row.status is RunStatus.RUNNING and 0 < row.lease_expires < now",
                "return row.status is RunStatus.RUNNING and -1 < row.lease_expires < now", UNREACHABLE,
                "at head no RUNNING row has lease 0 (every segment is leased since ADR-141; KB-10's unleased "
                "rows are a non-head preset's)"),
    BlindMutant("model/transitions.py", "if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:",
                "if row.status < RunStatus.RUNNING or row.claimed_by != self.me:", UNREACHABLE,
                "no row other than a RUNNING one holds an owner (T7, T8, T9, T11, T13 and T14 all clear "
                "claimed_by), so the owner predicate alone refuses every row the status predicate would"),
    BlindMutant("model/transitions.py", "if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:",
                "if row.status <= RunStatus.RUNNING or row.claimed_by != self.me:", NOT_HEAD,
                "the deadline proposal's P1 extendLease (and an owner-guarded statement, as above)"),
    BlindMutant("model/transitions.py", "return row.status is RunStatus.RUNNING and 0 < row.lease_expires < now",
                "return row.status <= RunStatus.RUNNING and 0 < row.lease_expires < now", UNREACHABLE,
                "only a RUNNING row holds a lease (T7, T8, T9, T11, T13 and T14 all clear lease_expires), so the "
                "lease predicate alone refuses every row the status predicate would"),
    BlindMutant("model/resume.py", "if state is None or not state.decodable:",
                "if state is None and not state.decodable:", WORLD_GAP,
                "the state is None only when the fresh read failed, which returns first; the world stores "
                "no undecodable state"),
    BlindMutant("model/resume.py", "decision = Step(StepKind.APPROVAL, state.round_no, decision=\"approve\" if "
                "approved else \"deny\")", "decision = Step(StepKind.APPROVAL, state.round_no, decision=\"approve\" "
                "if not approved else \"deny\")", UNRECORDED,
                "only the approval step's label changes, and the audit record the world keeps of a step holds "
                "its kind, round, tool, call and execution, not the decision it names"),
    BlindMutant("model/executor.py", "return (yield from _suspend(seg, suspension.state, for_input=False))",
                "return (yield from _suspend(seg, suspension.state, for_input=True))", UNRECORDED,
                "an approval suspended as an input wait: which tools of a turn require approval (marker, "
                "server flag) is not in the history"),
    BlindMutant("model/tools.py", "if spec.remote:", "if not spec.remote:", UNRECORDED,
                "which tools require approval (marker, remote server flag, builtin write) is not in the history"),
    BlindMutant("model/constants.py", "IDENTITY_MAX_CHARS = 64", "IDENTITY_MAX_CHARS = 63", WORLD_GAP,
                "no identity reaches 63 characters: kind:host:pid with a hostname of at most 40 (the schema's "
                "HostName) and a pid of at most 5 digits is at most 58, so neither limit truncates"),
    BlindMutant("model/transitions.py", "return row.status is RunStatus.RUNNING and 0 < row.lease_expires < now",
                "return row.status is RunStatus.RUNNING and 0 <= row.lease_expires < now", UNREACHABLE,
                "at head no RUNNING row has lease 0 (every segment is leased since ADR-141)"),
    BlindMutant("model/transitions.py", "stale = [r for r in rows if r.status is running and 0 < r.lease_expires < "
                "now]  # = is_stale, inlined", "stale = [r for r in rows if r.status is running and 0 <= "
                "r.lease_expires < now]  # = is_stale, inlined", UNREACHABLE,
                "the reaper's SELECT: at head no RUNNING row has lease 0 (every segment is leased since ADR-141)"),
    BlindMutant("model/transitions.py", "terminal_guard: bool = True", "terminal_guard: bool = False", UNREACHABLE,
                "an unused default: every settle passes terminal_guard (KB-1's flag)"),
    BlindMutant("model/transitions.py", "if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:",
                "if row.status > RunStatus.RUNNING or row.claimed_by != self.me:", UNREACHABLE,
                "no row other than a RUNNING one holds an owner, so the owner predicate alone refuses every row "
                "the status predicate would"),
    BlindMutant("model/transitions.py", "return _replace(row, status=RunStatus.RUNNING, claimed_by=\"\", "
                "lease_expires=0, tstamp=self.now)", "return _replace(row, status=RunStatus.RUNNING, claimed_by=\"\", "
                "lease_expires= 1, tstamp=self.now)", NOT_HEAD,
                "KB-10's unleased claim for resume (leased=False): only the presets before ADR-141 run it"),
    BlindMutant("model/entrypoints.py", "lease = 0 if unleased else now + LEASE_S",
                "lease = -1 if unleased else now + LEASE_S", NOT_HEAD,
                "an unleased interactive begin: only the presets before ADR-141 run it"),
    BlindMutant("model/vocab.py", "return self is TerminationReason.PROVIDER_FAILED",
                "return self >= TerminationReason.PROVIDER_FAILED", UNREACHABLE,
                "TerminationReason.is_retryable has no caller in the runtime (recovery classifies the failure)"),
    BlindMutant("model/vocab.py", "return self is TerminationReason.PROVIDER_FAILED",
                "return self is not TerminationReason.PROVIDER_FAILED", UNREACHABLE,
                "TerminationReason.is_retryable has no caller in the runtime (recovery classifies the failure)"),
    BlindMutant("model/entrypoints.py", "if not request.decodable or not request.configuration_exists:",
                "if not request.decodable and not request.configuration_exists:", WORLD_GAP,
                "the world stores no undecodable request and deletes no configuration (payload_failure_has_cause "
                "says so), so the rehydration check never fails"),
    BlindMutant("model/resume.py", "return (yield from execute(seg, None, ResumeSeed(state, True, for_input=True, "
                "input_valid=True)))", "return (yield from execute(seg, None, ResumeSeed(state, True, "
                "for_input=False, input_valid=True)))", WORLD_GAP,
                "it differs only for a pending input call whose tool now requires approval: the approval scan "
                "runs before the input scan on the same turn, and a deploy renames or removes a tool, never "
                "gives a name a new approval requirement"),
    BlindMutant("model/resume.py", "if not policy.kb12_approval_not_audited and (digest is None or digest != "
                "state.turn_digest):", "if not policy.kb12_approval_not_audited and (digest is None and digest != "
                "state.turn_digest):", WORLD_GAP,
                "it runs a stale approval: the world's approvers decide each turn once, on the turn the row waits "
                "on, and nothing moves a waiting row but that decision or a cancel, so no approval is stale "
                "(approval_runs_as_decided's record of a stale decision never fires)"),
    BlindMutant("model/transitions.py", "if self.status_guard and row.status is not RunStatus.RUNNING:",
                "if self.status_guard and row.status < RunStatus.RUNNING:", WORLD_GAP,
                "the statuses compare as strings, so it differs only on a row WAITING when T9 lands (it still "
                "refuses queued and terminal rows): a segment outliving its row's reclaim. A deployment reaches "
                "it: a T9 stalled past the lease lands after the reaper requeued the row and another worker "
                "claimed it and suspended it (T9 has no owner guard); the world can stall a statement that "
                "long, but the sweep's draws never line the stall up with a second suspend"),
    BlindMutant("model/loop.py", "if turn.outcome is TurnOutcome.CONTEXT_TRUNCATED:  # the fit throws after its "
                "step (spec 3.2 step 1)", "if turn.outcome >= TurnOutcome.CONTEXT_TRUNCATED:  # the fit throws "
                "after its step (spec 3.2 step 1)", WORLD_GAP,
                "the world wires no context-window manager (no context step is ever recorded), so this check "
                "never runs; a scenario with one would reach it"),
)  # fmt: skip


def _changed(diff: str) -> tuple[set[str], set[str]]:
    removed = {line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")}
    added = {line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")}
    return removed, added


def reason_for(mutant: Mapping[str, object]) -> BlindMutant | None:
    """The record that explains a survivor (a mutant's document: ``file`` and ``diff``), or None."""
    removed, added = _changed(str(mutant.get("diff", "")))
    for record in BLIND:
        if record.file != mutant.get("file") or record.before not in removed:
            continue
        if not record.after or record.after in added:
            return record
    return None


__all__ = ["BLIND", "NOT_HEAD", "SAME_OUTCOME", "UNREACHABLE", "UNRECORDED", "WORLD_GAP", "BlindMutant", "reason_for"]
