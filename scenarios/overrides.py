"""Scenario overrides a sweep applies per cell: tool latency as a ratio of the lease, the transport, the
store's identity collation, the fault ranges.

Pure functions of a :class:`scenarios.schema.Scenario`, beside :mod:`scenarios.intensity` (which scales
the fault profile). A ratio of 0 and an empty transport or collation mean "the scenario as written", so a sweep
cell without overrides simulates exactly the library scenario and its digests match ``leaselab run``.
Knows the schema and the lease length; nothing about sweeps, files or the world.
"""

from __future__ import annotations

from model.collation import COLLATIONS
from model.constants import LEASE_S
from model.errors import LeaselabError
from scenarios.intensity import scale_faults
from scenarios.schema import Scenario, ToolModel

AS_WRITTEN = 0.0


def _latency(tool: ToolModel, ratio: float) -> tuple[float, float]:
    """The tool's latency range moved so its midpoint is ``ratio`` x LEASE_S.

    The spread is kept proportional (a tool that varies +-50% around its midpoint still does),
    because the question a latency sweep asks is "how often does a call outlive the lease",
    which depends on where the range sits relative to the lease, not on its width.
    """
    lo, hi = tool.latency_s
    target = ratio * LEASE_S
    middle = (lo + hi) / 2
    if middle <= 0:
        return (target, target)
    return (lo / middle * target, hi / middle * target)


def with_latency_ratio(scenario: Scenario, ratio: float) -> Scenario:
    """Every tool's latency set to ``ratio`` x the lease length (midpoint); 0 = as written."""
    if ratio == AS_WRITTEN or not scenario.tools:
        return scenario
    tools = [tool.model_copy(update={"latency_s": _latency(tool, ratio)}) for tool in scenario.tools]
    return scenario.model_copy(update={"tools": tools})


def with_transport(scenario: Scenario, transport: str) -> Scenario:
    """The scenario with its wake-up transport set ('sync' / 'async'); '' = as written."""
    if not transport or transport == scenario.world.transport:
        return scenario
    world = scenario.world.model_copy(update={"transport": transport})
    return scenario.model_copy(update={"world": world})


def with_collation(scenario: Scenario, collation: str) -> Scenario:
    """The scenario with its store's identity collation set ('binary' / 'unicode_ci'); '' = as written."""
    if not collation or collation == scenario.world.identity_collation:
        return scenario
    world = scenario.world.model_copy(update={"identity_collation": collation})
    return scenario.model_copy(update={"world": world})


LIBRARY_RANGES = "library"
DEPLOYMENT_RANGES = "deployment"


def at_ranges(scenario: Scenario, fault_ranges: str) -> Scenario:
    """The scenario at the fault ranges named: '' or 'library' as it declares them, 'deployment'
    widened to those of real deployments (:meth:`Scenario.at_deployment_ranges`)."""
    if fault_ranges in ("", LIBRARY_RANGES):
        return scenario
    if fault_ranges == DEPLOYMENT_RANGES:
        return scenario.at_deployment_ranges()
    raise ValueError(f"unknown fault ranges {fault_ranges!r} (valid: {LIBRARY_RANGES}, {DEPLOYMENT_RANGES})")


def overridden(
    scenario: Scenario, latency_ratio: float = AS_WRITTEN, transport: str = "", collation: str = ""
) -> Scenario:
    """The three overrides; the result is re-validated so an override can never build an invalid scenario."""
    changed = with_collation(with_transport(with_latency_ratio(scenario, latency_ratio), transport), collation)
    if changed is scenario:
        return scenario
    return Scenario.model_validate(changed.model_dump())


TRANSPORTS = ("sync", "async")
MAX_FACTOR = 100.0
"""The largest intensity and latency ratio a sweep configuration accepts (``sim/sweep/config.py``)."""


def cell_overrides(
    intensity: float, latency_ratio: float, transport: str, fault_ranges: str, collation: str = "", *, cli: bool = False
) -> None:
    """Check the five keys of a sweep cell as a caller of ``simulate`` or ``leaselab run`` gives them;
    a bad one is a one-line :class:`model.errors.LeaselabError` naming the argument (``cli``: the
    option, ``--latency-ratio``)."""

    def field(name: str) -> str:
        return "--" + name.replace("_", "-") if cli else name

    for name, value, low in (("intensity", intensity, 0.0), ("latency_ratio", latency_ratio, 0.0)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= MAX_FACTOR:
            raise LeaselabError(
                f"must be a number from 0 to {MAX_FACTOR:g}, not {value!r}",
                field=field(name),
                hint="0 = as written" if name == "latency_ratio" else "1 = as written, 0 = no random faults",
            )
    if transport not in ("", *TRANSPORTS):
        raise LeaselabError(f"must be one of: {', '.join(TRANSPORTS)}, not {transport!r}", field=field("transport"))
    if collation not in ("", *COLLATIONS):
        raise LeaselabError(f"must be one of: {', '.join(COLLATIONS)}, not {collation!r}", field=field("collation"))
    if fault_ranges not in ("", LIBRARY_RANGES, DEPLOYMENT_RANGES):
        raise LeaselabError(
            f"must be one of: {LIBRARY_RANGES}, {DEPLOYMENT_RANGES}, not {fault_ranges!r}", field=field("fault_ranges")
        )


def shaped(
    scenario: Scenario,
    *,
    intensity: float = 1.0,
    latency_ratio: float = AS_WRITTEN,
    transport: str = "",
    fault_ranges: str = "",
    collation: str = "",
) -> tuple[Scenario, bool]:
    """The scenario of one sweep cell: at ``fault_ranges``, with the latency, transport and collation
    overrides, its fault probabilities scaled by ``intensity``; and whether latency, transport or collation
    changed it (the fault ranges and the intensity do not count: a counterexample stores its fault
    profile). The one recipe a sweep task and ``simulate(..., intensity=...)`` share, so a row's keys
    replay its digest."""
    base = at_ranges(scenario, fault_ranges)
    changed = overridden(base, latency_ratio, transport, collation)
    cell = scale_faults(changed, intensity) if intensity != 1.0 else changed
    return cell, changed is not base
