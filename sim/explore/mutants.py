"""Policy mutants: flip each flag of ``head``, one at a time, and check that the search notices.

A mutant is ``head`` with one :class:`model.policy.Policy` field flipped. It is *killed* when a
swarm batch on one of its targets shows a violation ``head`` does not have:

- on a *clean* target (``head``'s paired batch, the same draws, violates nothing) any violation;
- on any other target a violation that no registered finding or recorded non-guarantee of
  ``head`` (:mod:`register.findings`) recognises: a new mechanism, not one ``head`` already has.

Its targets are ``default`` with every family, plus the known-defect catalogue's scenario and
families when the flag is a defect flag, plus the scenarios that exercise the mechanism the flag
switches. A mutant that no search can tell from ``head`` is listed in :data:`EQUIVALENT` with the
reason instead of being searched. The score is killed / (total - equivalent).

A kill must be a consequence found under faults: the killing simulation's history shows at least
one injected fault taking effect (random or scripted). A violation in a fault-free simulation only
proves a flag is wired, so it is not counted.

Beside the flag mutants, :mod:`sim.explore.code_mutants` replaces functions of the model itself (a
wrong classifier, resolver, recordStep); they are searched the same way and scored separately.
Each code mutant is also run through the head sweep alone (:mod:`sim.explore.sweep_mutants`): the
sweep-only score says which the suite's sweep would flag as an unregistered violation without a target
chosen for it. Finally every invariant is checked for exercise: one that no kill, known defect or registered
finding violates is listed as unexercised, with the reason in :data:`UNEXERCISED_REASONS`.

Batches draw exactly as :class:`sim.explore.swarm.SwarmExplorer` does (one ``random.Random``:
a world seed, then a profile, per simulation) but judge each simulation as it comes and stop at
the first kill, without shrinking every other violation on the way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from checks import INVARIANTS
from model.policy import FLAG_NAMES, HEAD
from register.findings import FINDINGS
from register.known_defects import KNOWN_DEFECTS
from scenarios.families import FAMILIES
from sim.explore.base import Clock, Target
from sim.explore.code_mutants import CODE_MUTANTS, CodeMutant, applied
from sim.explore.counterexample import Counterexample
from sim.explore.swarm import Draw, swarm_batch, swarm_draws
from sim.explore.sweep_mutants import SWEEP_SIMULATIONS, SweepFlag, sweep_flag, unexplained
from sim.world.simulate import SimulationResult


def under_faults(result: SimulationResult) -> bool:
    """Whether at least one injected fault took effect in ``result`` (a kill needs one)."""
    return any(result.faults_fired.values())


# ---- the mutants -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MutantTarget:
    scenario: str
    families: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.scenario} [{','.join(self.families) or 'no random faults'}]"


DEFAULT_TARGET = MutantTarget("default", FAMILIES)

EQUIVALENT: Mapping[str, str] = {
    "operation_deadline": (
        "proposal: before every provider and tool call the lease is extended to max(LEASE_S, the call's "
        "declared deadline). No library tool or provider declares a deadline (deadline_s = 0), so the "
        "extension renews to LEASE_S just after the boundary renewal did the same: a slow call still "
        "outlives its lease and is reaped mid-call, and no invariant can tell the mutant from head. The "
        "flip adds a mechanism (one more guarded renewal per call); with declared deadlines it would "
        "close the reaped-mid-call window behind F-02 and the reaper route of F-01."
    ),
}
"""Mutants no search can tell from head, with the reason; they are not searched."""

# The scenarios (beyond default) that exercise the mechanism a flag switches.
_EXERCISED_BY: Mapping[str, tuple[MutantTarget, ...]] = {
    "typed_effects": (MutantTarget("happy_path", ("slow", "crash")),),
    "fail_closed_write_audit": (MutantTarget("audit_failure_after_write", ()),),
    "write_fence": (MutantTarget("happy_path", ("slow", "crash")),),
    "fence_blocks_retry": (MutantTarget("worker_crash_mid_write", ()), MutantTarget("tool_outlives_lease", ())),
    "kb1_finish_unguarded": (MutantTarget("happy_path", ("cancel",)),),
    # KB-6 needs no fault to strike; a kill must still show under one (any family that leaves the
    # same-second boundaries in place).
    "kb6_renew_trusts_changed_rows": (MutantTarget("same_second_renewals", ("clock_skew",)),),
    # A deploy renames a tool between attempts: the next attempt calls a name the code lost.
    "unknown_tool_is_strictest": (MutantTarget("deploy_between_attempts", ()),),
    # The proposal lets the deciders retry a fenced run; a reaped write still in flight then lands
    # beside the retry's, because the dedup store replays only completed calls.
    "idempotency_keys": (MutantTarget("default", ("slow",)),),
}


def _catalogue_targets(flag: str) -> tuple[MutantTarget, ...]:
    """The known-defect catalogue's (scenario, families) for a defect flag, or for the flag whose
    switch-off is a catalogued defect (``dead_letter_payloadless`` is KB-11)."""
    found = []
    for entry in KNOWN_DEFECTS:
        named = flag.startswith("kb") and entry.id == "KB-" + flag[2:].split("_", 1)[0]
        if named or flag in entry.defective_flags:
            found.append(MutantTarget(entry.scenario, tuple(entry.families)))
    return tuple(found)


def mutant_targets(flag: str) -> tuple[MutantTarget, ...]:
    """Where the mutant of ``flag`` is searched: its specific targets first, then ``default``."""
    specific = (*_EXERCISED_BY.get(flag, ()), *_catalogue_targets(flag))
    unique = list(dict.fromkeys(specific))
    return (*unique, DEFAULT_TARGET) if DEFAULT_TARGET not in unique else tuple(unique)


def mutant_flags(flag: str) -> dict[str, bool]:
    """The one-flag override that makes the mutant of ``flag``."""
    return {flag: not getattr(HEAD, flag)}


@dataclass(frozen=True)
class Kill:
    flag: str
    invariant: str
    simulations: int
    """Simulations of the mutant's search up to and including the killing one."""
    target: MutantTarget
    counterexample: Counterexample
    violated: tuple[str, ...] = ()
    """Every invariant the killing simulation violated beyond head's registered behaviour."""
    kind: str = "flag"
    """"flag" (a policy flag flipped) or "code" (a function of the model replaced)."""


@dataclass
class MutationReport:
    killed: list[Kill] = field(default_factory=list)
    equivalent: list[tuple[str, str]] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)
    simulations: int = 0
    elapsed_s: float = 0.0
    code_killed: list[Kill] = field(default_factory=list)
    code_survivors: list[str] = field(default_factory=list)
    unexercised: list[tuple[str, str]] = field(default_factory=list)
    """(invariant, reason) for every invariant nothing violated; reason '' = none given."""
    code_sweep_flagged: list[SweepFlag] = field(default_factory=list)
    """Code mutants the head sweep alone flags with an unregistered violation (:mod:`sim.explore.sweep_mutants`)."""
    code_sweep_missed: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """The flag mutants' score."""
        judged = len(self.killed) + len(self.survivors)
        return len(self.killed) / judged if judged else 1.0

    @property
    def code_score(self) -> float:
        judged = len(self.code_killed) + len(self.code_survivors)
        return len(self.code_killed) / judged if judged else 1.0

    @property
    def code_sweep_score(self) -> float:
        """The code mutants the head sweep alone flags, of those it was run on."""
        judged = len(self.code_sweep_flagged) + len(self.code_sweep_missed)
        return len(self.code_sweep_flagged) / judged if judged else 1.0

    @property
    def unexplained_unexercised(self) -> list[str]:
        return [name for name, reason in self.unexercised if not reason]

    def document(self) -> dict[str, object]:
        return {
            "score": round(self.score, 4),
            "killed": [_kill_document(k) for k in self.killed],
            "equivalent": [{"flag": flag, "reason": reason} for flag, reason in self.equivalent],
            "survivors": list(self.survivors),
            "code_score": round(self.code_score, 4),
            "code_killed": [_kill_document(k) for k in self.code_killed],
            "code_survivors": list(self.code_survivors),
            "unexercised": [{"invariant": name, "reason": reason} for name, reason in self.unexercised],
            "code_sweep_score": round(self.code_sweep_score, 4),
            "code_sweep_flagged": [flag.document() for flag in self.code_sweep_flagged],
            "code_sweep_missed": list(self.code_sweep_missed),
        }


def _kill_document(k: Kill) -> dict[str, object]:
    return {
        "flag": k.flag,
        "invariant": k.invariant,
        "simulations": k.simulations,
        "scenario": k.target.scenario,
        "faults": list(k.target.families),
    }


@dataclass
class Baselines:
    """``head``'s paired batch per target, computed once: is the target clean?"""

    simulations: int
    seed: int
    clean: dict[MutantTarget, bool] = field(default_factory=dict)
    spent: int = 0

    def is_clean(self, target: MutantTarget) -> bool:
        if target not in self.clean:
            batch = swarm_batch(Target(target.scenario, "head", {}, target.families), self.simulations, self.seed)
            violated = False
            for draw in batch:
                self.spent += 1
                if draw.result.violations:
                    violated = True
                    break
            self.clean[target] = not violated
        return self.clean[target]


Progress = Callable[[str, int, int], None]
"""Called as progress(mutant, done, total) before each mutant's search (``done`` mutants judged of
``total``, equivalent ones not counted), and once more at the end."""


def hunt(
    flag: str,
    simulations: int,
    seed: int,
    baselines: Baselines,
    deadline_s: float | None = None,
) -> tuple[Kill | None, int]:
    """Search the mutant of ``flag`` target by target; the first kill, and the simulations spent."""
    clock = Clock()
    spent = 0
    for target in mutant_targets(flag):
        clean = baselines.is_clean(target)
        search = Target(target.scenario, "head", mutant_flags(flag), target.families)
        remaining = None if deadline_s is None else max(0.0, deadline_s - clock.elapsed())
        for draw in swarm_batch(search, simulations, seed, remaining):
            spent += 1
            if not under_faults(draw.result):
                continue
            new = draw.result.violations if clean else unexplained(draw.result)
            if new:
                cx = draw.counterexample(search, new[0])
                return Kill(flag, new[0], spent, target, cx, tuple(new)), spent
    return None, spent


def hunt_code(
    mutant: CodeMutant,
    simulations: int,
    seed: int,
    baselines: Baselines,
    deadline_s: float | None = None,
) -> tuple[Kill | None, int]:
    """Search a code mutant on its targets; head's baselines are judged before the patch goes in."""
    targets = tuple(MutantTarget(scenario, families) for scenario, families in mutant.targets)
    clean = {target: baselines.is_clean(target) for target in targets}
    clock = Clock()
    spent = 0
    with applied(mutant):
        for target in targets:
            search = Target(target.scenario, "head", {}, target.families)
            remaining = None if deadline_s is None else max(0.0, deadline_s - clock.elapsed())
            for draw in swarm_batch(search, simulations, seed, remaining):
                spent += 1
                if not under_faults(draw.result):
                    continue
                new = draw.result.violations if clean[target] else unexplained(draw.result)
                if new:
                    cx = draw.counterexample(search, new[0])
                    return Kill(mutant.name, new[0], spent, target, cx, tuple(new), "code"), spent
    return None, spent


UNEXERCISED_REASONS: Mapping[str, str] = {
    "lease_is_the_specs": "violated by the code mutant renewal_overshoots_lease and by the automatic mutants of "
    "LEASE_S (constants.py, `leaselab mutants --auto`)",
    "requeue_backoff_per_spec": "violated by the automatic mutants of requeue_backoff_ms (constants.py, "
    "`leaselab mutants --auto`); no flag or code mutant changes the backoff",
    "entry_points_throw_as_specified": "violated by the automatic mutants that let a claim's or recovery's store "
    "error escape (entrypoints.py, recovery.py, `leaselab mutants --auto`)",
    "event_sequence_without_gap": "violated by the automatic mutants of the stream position (resume.py, "
    "entrypoints.py, hooks.py; `leaselab mutants --auto`); no flag or code mutant skips a sequence number",
    "recovery_per_spec": "violated by the automatic mutants of the recovery's classification (entrypoints.py, "
    "failures.py, vocab.py; `leaselab mutants --auto`)",
    "rounds_per_spec": "violated by the automatic mutants of the loop's rounds (loop.py, records.py, tools.py; "
    "`leaselab mutants --auto`)",
    "claim_follows_precheck": "violated by the automatic mutants of the claim's pre-check (entrypoints.py, resume.py; "
    "`leaselab mutants --auto`)",
    "inserted_row_per_spec": "violated by the automatic mutants of the inserted row's columns (entrypoints.py, "
    "records.py; `leaselab mutants --auto`)",
    "settled_totals_per_spec": "violated by the automatic mutants of the settled totals (settle.py; "
    "`leaselab mutants --auto`)",
    "payload_failure_has_cause": "violated by the automatic mutants of the resume's payload checks (resume.py; "
    "`leaselab mutants --auto`)",
    "stale_selection_per_spec": "violated by the automatic mutants of the reaper's stale selection (transitions.py; "
    "`leaselab mutants --auto`)",
    "input_resume_runs_its_calls": "violated by the automatic mutants of the input resume (`leaselab mutants --auto`)",
    "requeued_row_per_spec": "violated by the automatic mutants of the requeue's columns (transitions.py; "
    "`leaselab mutants --auto`)",
    "approval_runs_as_decided": "violated by the automatic mutants of the approval path (hooks.py, loop.py, "
    "resume.py, segment.py; `leaselab mutants --auto`)",
    "audit_step_execution_true": "violated by the automatic mutants of the step records (records.py; "
    "`leaselab mutants --auto`)",
    "fence_stamps_a_write": "violated by the automatic mutants of the fence stamp (hooks.py; "
    "`leaselab mutants --auto`)",
    "failure_classified_per_spec": "violated by the automatic mutants of the status classifier that move a code "
    "between auth, clientError and unknown (failures.py:196 NumberReplacer#5 and #6, failures.py:202 "
    "ReplaceComparisonOperator_LtE_Eq#3, _LtE_Lt#2, _LtE_Lt#3, _LtE_NotEq#2; `leaselab mutants --auto`) and by "
    "the KB-13 flag (an exhausted 5xx chain classified unknown)",
    "invoked_tool_known_and_offered": "violated by the automatic mutant of invoke's refusal (loop.py:74 "
    "ReplaceOrWithAnd, `leaselab mutants --auto`): a call of a tool a deploy renamed away still runs",
    "position_reresolved_after_claim": "violated by the automatic mutant of the resume's position (resume.py:74 "
    "AddNot, `leaselab mutants --auto`) and by KB-2's flag: a resume that keeps its pre-claim probe",
}
"""Invariants that no flag mutant, code mutant, known defect or registered finding violates, each
with the reason it is kept (or the mutant that would violate it)."""


def exercised_invariants(report: MutationReport) -> set[str]:
    """The invariants something violated: a kill of this report, a known defect, a registered finding."""
    seen: set[str] = set()
    for kill in (*report.killed, *report.code_killed):
        seen.update(kill.violated or (kill.invariant,))
    seen.update(flag.invariant for flag in report.code_sweep_flagged)
    for entry in KNOWN_DEFECTS:
        seen.add(entry.invariant)
    for finding in FINDINGS:
        seen.update(finding.invariants)
    return seen


def unexercised(report: MutationReport) -> list[tuple[str, str]]:
    exercised = exercised_invariants(report)
    return [(inv.name, UNEXERCISED_REASONS.get(inv.name, "")) for inv in INVARIANTS if inv.name not in exercised]


def run_mutants(
    simulations: int = 300,
    seed: int = 0,
    *,
    budget_s: float | None = None,
    flags: Sequence[str] = FLAG_NAMES,
    progress: Progress | None = None,
    code: Sequence[CodeMutant] | None = None,
    sweep_simulations: int = SWEEP_SIMULATIONS,
) -> MutationReport:
    """Flip each of ``flags`` over ``head``; ``simulations`` per target, ``budget_s`` per mutant. Each code
    mutant is also run through the head sweep alone (``sweep_simulations`` per library scenario, 0 = not)."""
    report = MutationReport()
    clock = Clock()
    baselines = Baselines(simulations, seed)
    code = CODE_MUTANTS if code is None else code
    total = sum(1 for flag in flags if flag not in EQUIVALENT) + len(code)
    done = 0
    for flag in flags:
        if flag in EQUIVALENT:
            report.equivalent.append((flag, EQUIVALENT[flag]))
            continue
        if progress is not None:
            progress(flag, done, total)
        done += 1
        kill, spent = hunt(flag, simulations, seed, baselines, budget_s)
        report.simulations += spent
        if kill is None:
            report.survivors.append(flag)
        else:
            report.killed.append(kill)
    for mutant in code:
        if progress is not None:
            progress(mutant.name, done, total)
        done += 1
        kill, spent = hunt_code(mutant, simulations, seed, baselines, budget_s)
        report.simulations += spent
        if kill is None:
            report.code_survivors.append(mutant.name)
        else:
            report.code_killed.append(kill)
        if sweep_simulations > 0:
            if progress is not None:
                progress(f"{mutant.name} (head sweep)", done - 1, total)
            flagged, swept = sweep_flag(mutant, sweep_simulations, deadline_s=budget_s)
            report.simulations += swept
            if flagged is None:
                report.code_sweep_missed.append(mutant.name)
            else:
                report.code_sweep_flagged.append(flagged)
    report.simulations += baselines.spent
    if progress is not None:
        progress("", done, total)
    report.unexercised = unexercised(report)
    report.elapsed_s = clock.elapsed()
    return report


def policy_fields() -> tuple[str, ...]:
    """Every field of :class:`model.policy.Policy`: the mutants to make."""
    return tuple(f.name for f in dataclasses.fields(HEAD))


__all__ = [
    "DEFAULT_TARGET",
    "EQUIVALENT",
    "UNEXERCISED_REASONS",
    "Baselines",
    "Draw",
    "Kill",
    "MutantTarget",
    "MutationReport",
    "exercised_invariants",
    "hunt",
    "hunt_code",
    "mutant_flags",
    "mutant_targets",
    "policy_fields",
    "run_mutants",
    "swarm_batch",
    "swarm_draws",
    "under_faults",
    "unexercised",
    "unexplained",
]
