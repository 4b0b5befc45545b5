"""Register entries as search targets: ``explore --target F-16`` searches for that one mechanism.

A user who names a registered finding or a recorded non-guarantee wants the search to spend itself on
that mechanism, as the mechanism bench does (:func:`sim.bench.mechanisms.one_search`). The budget
(:meth:`EntryTarget.budget`) names and keeps only violations of the invariants behind the entry (another
invariant's violations are never matched against the register, so they cost nothing), stops at its
first meeting (``stop_at_first``) and names the entry in ``Budget.mechanisms``, which is what makes
the guided explorer climb that entry's chain (:func:`sim.explore.guided.chains`: F-16's only when it
is named). The find is then shrunk while it keeps its mechanism and written like any other;
:func:`outcome` says whether it was met and when (simulations and seconds, from the search's
:class:`sim.explore.discovery.Discovery`).

Why the search's scenario, ranges and families stay the user's: the register's own set-up
(:attr:`EntryTarget.setup`) is one place the entry is met, not the only one; a search that does not meet it
says where the register did.

Knows the register's entries, never the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from model.errors import LeaselabError, unknown_name
from register.findings import FINDINGS
from register.nonguarantees import NON_GUARANTEES
from scenarios.families import FAMILIES
from sim.explore.base import Budget, ExploreReport

FIELD = "--target"


@dataclass(frozen=True)
class EntryTarget:
    """One register entry as a search target."""

    id: str
    invariants: tuple[str, ...]
    """Every invariant the entry's mechanism may show through (a finding's ``invariants``, a
    non-guarantee's)."""
    families: tuple[str, ...]
    """The fault families of the register's counterexample (every family for a non-guarantee)."""
    deployment: bool
    """The register meets it only at deployment fault ranges."""
    scenario: str
    """The scenario the register meets it on (a finding's counterexample's; ``default`` for a
    non-guarantee)."""

    def budget(self, budget: Budget) -> Budget:
        """``budget`` spent on this entry alone: only its invariants' violations kept, stopped at its first meeting."""
        return replace(
            budget,
            stop_at_first=True,
            invariants=frozenset(self.invariants),
            mechanisms=frozenset({self.id}),
        )

    @property
    def setup(self) -> str:
        """Where the register meets it, as ``explore``'s words: scenario, ranges and faults."""
        ranges = " --ranges deployment" if self.deployment else ""
        faults = "all" if set(self.families) == set(FAMILIES) else ",".join(self.families)
        return f"{self.scenario}{ranges} --faults {faults}"


def entry_target_ids() -> list[str]:
    """Every id ``--target`` takes besides ``cost:NAME``: the findings', then the non-guarantees'."""
    return [f.id for f in FINDINGS] + [n.id for n in NON_GUARANTEES]


def check_entry_target(name: str) -> EntryTarget:
    """The register entry ``name`` names; else a one-line error naming ``--target``."""
    from sim.explore.counterexample import read

    for finding in FINDINGS:
        if finding.id == name:
            scenario = read(finding.path).scenario
            return EntryTarget(finding.id, finding.invariants, finding.families, finding.deployment_ranges, scenario)
    for ng in NON_GUARANTEES:
        if ng.id == name:
            return EntryTarget(ng.id, ng.invariants, FAMILIES, False, "default")
    what, _ = unknown_name("target", name, [*entry_target_ids(), "cost:NAME"], see="")
    raise LeaselabError(what, field=FIELD, hint=f"give {_span()} or cost:NAME")


def _span() -> str:
    """The ids in a few words: the whole list does not fit one line."""
    findings = f"{FINDINGS[0].id}..{FINDINGS[-1].id}"
    return f"a finding {findings}, a non-guarantee ({NON_GUARANTEES[0].id}, ...: register/nonguarantees.py)"


def outcome(report: ExploreReport, entry: EntryTarget) -> dict[str, Any]:
    """Whether the search met ``entry`` and when it first did (the search's own count and seconds, before
    shrinking), recorded in ``report.extra["target"]`` for the JSON and the text line."""
    met = next((m for m in report.extra.get("mechanisms", ()) if m.get("mechanism") == entry.id), None)
    doc: dict[str, Any] = {"mechanism": entry.id, "met": met is not None, "invariants": list(entry.invariants)}
    if met is not None:
        doc["first_simulation"] = met["first_simulation"]
        doc["first_s"] = met["first_s"]
    else:
        doc["register_setup"] = entry.setup
    report.extra["target"] = doc
    return doc


def outcome_text(doc: dict[str, Any]) -> str:
    """``target F-16 met after 198 simulations / 3.901 s`` (the seconds as recorded, to the millisecond,
    so no second rounding disagrees with the find's own line) or ``target F-16 not met (the register
    meets it on ...)``."""
    if doc["met"]:
        return f"target {doc['mechanism']} met after {doc['first_simulation']:,} simulations / {doc['first_s']:.3f} s"
    return f"target {doc['mechanism']} not met (the register meets it on {doc['register_setup']})"


__all__ = ["EntryTarget", "check_entry_target", "entry_target_ids", "outcome", "outcome_text"]
