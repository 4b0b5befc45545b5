"""``leaselab mutants --auto``: automatic mutants of the runtime judged by the head sweep and the unit tests.

Samples mutants of ``model/*.py`` made with cosmic-ray's operators (:mod:`sim.explore.auto_mutants`),
drops the equivalent and crashing ones with the reason, and judges each in its own process by the
head sweep alone and by ``tests/model`` (:mod:`sim.explore.auto_judge`). Prints the sweep-only score
among the mutants the tests kill, with its 95 % Wilson interval, and every survivor (the tests kill it,
the sweep does not) with its file, line and diff; a survivor ``register/blind_mutants.py`` records is
listed with that reason, and the score is also given without the equivalent mutants of head: those it
records as behaving as head under every input a deployment gives AND whose every paired history in the
sweep equals the unmutated tree's (the record is the reason, the identical histories its check).
JSON: :meth:`sim.explore.auto_judge.AutoReport.document` plus the interval, ``recorded_blind`` and
``equivalent_at_head``.
Exit 0 always once the mutants are judged (the score is the result), 2 on bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from register.blind_mutants import BlindMutant
    from sim.explore.auto_judge import AutoReport, Judged


EQUIVALENT_AT_HEAD = frozenset({"not head", "unreachable", "same outcome"})
"""Kinds of record whose mutant behaves as head does under every schedule (an "unrecorded" one does not:
its behaviour differs where the history lacks the ground truth to see it; nor does a "world gap" one: a
deployment takes the path the world does not)."""


def recorded_blind(report: AutoReport) -> dict[str, BlindMutant]:
    """The survivors register/blind_mutants.py records as invisible to every schedule of head, by name."""
    from register.blind_mutants import reason_for

    found = {}
    for judged in report.survivors:
        record = reason_for(judged.mutant.document())
        if record is not None:
            found[judged.mutant.name] = record
    return found


def equivalent_at_head(report: AutoReport, blind: dict[str, BlindMutant]) -> list[str]:
    """The survivors dropped from the score as equivalent mutants of head: recorded with an equivalent kind,
    and no paired history of the sweep differs from the unmutated tree's (unmeasured counts as differing)."""
    same = {j.mutant.name for j in report.survivors if j.histories_differ == 0 and j.histories_paired > 0}
    return sorted(name for name, record in blind.items() if record.kind in EQUIVALENT_AT_HEAD and name in same)


def without_equivalents(report: AutoReport, dropped: list[str]) -> tuple[int, int, tuple[float, float]] | None:
    """(sweep kills, mutants, Wilson interval) of the score without ``dropped``; None when nothing is left
    to drop or nothing would remain."""
    from reports.stats import wilson

    k, n = report.sweep_only
    if not dropped or n <= len(dropped):
        return None
    return k, n - len(dropped), wilson(k, n - len(dropped))


def _histories(judged: Judged) -> str:
    if judged.histories_differ is None:
        return "histories not compared"
    return f"histories differ in {judged.histories_differ} of {judged.histories_paired} paired draws"


def auto_lines(report: AutoReport, interval: tuple[float, float]) -> list[str]:
    k, n = report.sweep_only
    equivalent = sum(1 for d in report.dropped if d.kind == "equivalent")
    crashing = sum(1 for d in report.dropped if d.kind == "crashing")
    score = f"{k / n:.2f}" if n else "n/a"
    lines = [
        f"automatic mutants (cosmic-ray) of model/: {len(report.judged)} judged of a sample of "
        f"{report.sample if report.sample is not None else 'all'} (seed {report.seed}) from {report.sites} sites; "
        f"{equivalent} equivalent and {crashing} crashing dropped",
        f"sweep-only score among the {n} the unit tests kill: {score} ({k} of {n}), "
        f"95% Wilson interval [{interval[0]:.2f}, {interval[1]:.2f}]",
        f"the sweep kills {sum(1 for j in report.judged if j.sweep is not None)} of {len(report.judged)} in all; "
        f"neither kills {len(report.unkilled)}; {report.simulations:,} simulations in {report.elapsed_s:.0f} s "
        + (f"on the Dask scheduler at {report.scheduler}" if report.scheduler else f"on {report.workers} worker(s)"),
    ]
    if report.baseline_unexplained:
        found = ", ".join(report.baseline_unexplained)
        lines.append(f"WARNING: the unmutated sweep has unexplained violations: {found}")
    blind = recorded_blind(report)
    dropped_at_head = equivalent_at_head(report, blind)
    score_without = without_equivalents(report, dropped_at_head)
    if score_without is not None:
        _, n_open, (low, high) = score_without
        lines.append(
            f"without the {len(dropped_at_head)} equivalent mutants of head (register/blind_mutants.py records them as "
            f"not head's code, unreachable, or the same outcome, and every paired history equals head's): "
            f"{k / n_open:.2f} ({k} of {n_open}), 95% Wilson interval [{low:.2f}, {high:.2f}]"
        )
    for judged in report.survivors:
        record = blind.get(judged.mutant.name)
        if record is None:
            lines.append(f"  SURVIVED  {judged.mutant.name}: tests fail at {judged.tests_failed}; {_histories(judged)}")
        elif judged.mutant.name in dropped_at_head:
            lines.append(f"  equiv.    {judged.mutant.name} ({record.kind}): {record.reason}; {_histories(judged)}")
        else:
            contradicted = record.kind in EQUIVALENT_AT_HEAD and bool(judged.histories_differ)
            check = "; THE RECORD IS CONTRADICTED: " if contradicted else "; "
            lines.append(
                f"  blind     {judged.mutant.name} ({record.kind}): {record.reason}{check}{_histories(judged)}"
            )
        lines.extend("            " + line for line in judged.mutant.diff.splitlines()[2:])
    for judged in report.unkilled:
        lines.append(f"  unkilled  {judged.mutant.name} (neither the sweep nor the tests)")
    for dropped in report.dropped:
        lines.append(f"  {dropped.kind:<9} {dropped.mutant.name}: {dropped.reason}")
    return lines


def run_auto(
    sample: int | None, seed: int, workers: int, simulations: int, timeout_s: float, scheduler: str | None = None
) -> tuple[list[str], dict[str, object]]:
    """Sample, judge, and render; (text lines, JSON document). ``scheduler``: a Dask scheduler's address,
    reached through the sweep's executor code (``leaselab sweep --scheduler``); None: ``workers`` local processes."""
    import importlib.util
    from contextlib import ExitStack

    from model.errors import LeaselabError

    if importlib.util.find_spec("cosmic_ray") is None:
        raise LeaselabError(
            "needs cosmic-ray, which is not installed", field="--auto", hint="pip install 'leaselab[mutants]'"
        )
    from leaselab.cmd_sweep import enter_executor
    from reports.progress import meter
    from reports.stats import wilson
    from sim.explore.auto_judge import judge_all
    from sim.explore.auto_mutants import sample as draw

    kept, dropped, sites = draw(sample, seed)
    with ExitStack() as stack:
        executor = enter_executor(stack, scheduler, None) if scheduler else None
        show = stack.enter_context(meter("mutants --auto"))

        def judged(mutant: str, done: int, total: int) -> None:
            show("", done, total, unit="mutants", detail=mutant)

        report = judge_all(
            kept, workers=workers, simulations=simulations, timeout_s=timeout_s, progress=judged, executor=executor
        )
    report.scheduler = scheduler
    report.sites, report.sample, report.seed = sites, sample, seed
    report.dropped = [*dropped, *report.dropped]
    k, n = report.sweep_only
    interval = wilson(k, n)
    document = report.document(interval)
    blind = recorded_blind(report)
    document["recorded_blind"] = [
        {"mutant": name, "kind": record.kind, "reason": record.reason} for name, record in sorted(blind.items())
    ]
    dropped_at_head = equivalent_at_head(report, blind)
    document["equivalent_at_head"] = dropped_at_head
    score_without = without_equivalents(report, dropped_at_head)
    if score_without is not None:
        k_open, n_open, (low, high) = score_without
        document["sweep_only_without_equivalent_at_head"] = {
            "score": round(k_open / n_open, 4),
            "interval": [round(low, 4), round(high, 4)],
            "of": n_open,
        }
    return auto_lines(report, interval), document


__all__ = ["auto_lines", "equivalent_at_head", "run_auto", "without_equivalents"]
