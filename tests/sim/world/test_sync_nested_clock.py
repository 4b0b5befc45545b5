"""The Sync transport's nested attempt shares its process's clock, and the quiet phase heals it too.

On the Sync transport a dispatch runs the next attempt inline, nested in the dispatching call (spec
5.2): here the reaper's requeue runs the whole attempt inside the reaper's process. The nested worker
reads that process's clock (a clock fault that strikes during the nested call stays with the process
when it returns: one process, one clock). It must also be healed with it: when the quiet phase begins
during a nested call, its clock reads true time from then on. Before the merge it did not (the
nested worker was no live incarnation of the process table), so a lag from the chaos phase survived
into the quiet phase, stamped a lease already past and showed as an unexplained
``writes_fenced_under_lease`` at deployment ranges.
"""

from __future__ import annotations

from pathlib import Path

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import OpType
from scenarios.intensity import Tempo, with_tempo
from scenarios.loader import load_scenario
from scenarios.script import parse_script
from sim.world.clocks import EPOCH_S
from sim.world.simulate import simulate

SINGLE_RUN_SYNC = Path(__file__).resolve().parents[2] / "properties" / "scenarios" / "single_run_sync.toml"
# single_run on the Sync transport at deployment ranges (the triage's draw 130 of seed 0, shrunk): the
# client dies after its claim; the reaper's clock lags 2,532 s; the reaper requeues the run at about
# 3,443 s and runs the attempt inline; its provider call stretches past the quiet phase (3,600 s).
SEED = 4118503430
TEMPO = Tempo(latency_factor=0.04585714336960883, store_latency_s=0.40756072489623635)
SCRIPT = ("4 crash after 0.0", "15 clock_skew offset -2532.3535809525074", "85 slow stretch 1.1691299522778686")


def _run() -> tuple[Index, object]:
    scenario = with_tempo(load_scenario(SINGLE_RUN_SYNC).at_deployment_ranges(), TEMPO)
    result = simulate(scenario, "head", SEED, script=parse_script(list(SCRIPT)))
    return index_of(result.history), result


def test_a_nested_attempt_reads_true_time_once_the_quiet_phase_began() -> None:
    ix, result = _run()
    (quiet,) = [op for op in ix.of_type(H.PHASE, OpType.INFO) if op.get("phase") == "quiet"]
    nested = [
        op
        for op in ix.of_type(H.STORE, OpType.INVOKE)
        if op.process.startswith("reaper") and op.get("actor") == "worker"
    ]
    before = [op for op in nested if op.index < quiet.index]
    after = [op for op in nested if op.index > quiet.index]
    assert before and after, "the nested attempt began in the chaos phase and went on in the quiet phase"
    assert all(op.get("clock_s") < EPOCH_S + op.time_s - 2000 for op in before), "it read the reaper's lagging clock"
    stamps = [op for op in after if op.get("clock_s") == EPOCH_S + int(op.time_s)]
    assert len(stamps) == len(after), "after the heal every statement of the nested attempt read true time"
    assert "writes_fenced_under_lease" not in result.violations  # type: ignore[attr-defined]
