"""The world's clocks read a realistic epoch: true time plus ``EPOCH_S``, so a clock that lags by more
than the elapsed time still reads a positive time, and a lease stamped from it is a moment in the past
that the reaper reclaims (with an epoch of 0 it was ``<= 0``, which T12 reads as "no lease", and the
run was stranded: register/entries/README.md, the resolved open case)."""

from __future__ import annotations

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import OpType, epoch_of
from checks.index import row_of
from model.constants import LEASE_S
from scenarios.intensity import Tempo, with_tempo
from scenarios.loader import load_scenario
from scenarios.script import parse_script
from sim.world.clocks import EPOCH_S, Proc
from sim.world.simulate import simulate

# The stored open case of the last session (epoch 0): happy_path at deployment ranges; a client's
# clock steps back 3,560 s at request 73, the segment stamps its lease from it.
LAGGING_SCRIPT = (
    "38 crash after 0.0",
    "56 duplicate twice 139.39777705887747",
    "73 clock_skew offset -3560.707015833859",
    "102 crash after 0.0",
    "128 crash after 0.0",
)
LAGGING_SEED = 1351066238
LAGGING_TEMPO = Tempo(latency_factor=0.15504447284656112, store_latency_s=0.04737949779496498)


def test_a_clock_reads_the_epoch_plus_the_floor_of_its_true_time() -> None:
    proc = Proc("worker1#1", "worker", "worker:h1:101", "h1")
    assert proc.clock(0.0) == EPOCH_S
    assert proc.clock(903.9999999) == EPOCH_S + 903, "the epoch is added after the floor: no rounding up"
    proc.skew_s = -3600.5
    assert proc.clock(10.0) == EPOCH_S - 3591, "a lagging clock floors towards the past, and stays positive"


def test_the_history_states_its_epoch_and_every_row_time_is_after_it() -> None:
    result = simulate("default", "head", 3)
    assert epoch_of(result.history) == EPOCH_S == index_of(result.history).epoch_s
    leases = [row_of(op)["lease_expires"] for op in index_of(result.history).rows]
    assert leases and all(lease == 0 or lease > EPOCH_S for lease in leases)


def test_a_hand_built_history_without_an_epoch_keeps_its_own_axis() -> None:
    assert epoch_of([]) == 0
    assert index_of([]).time_of(905.0) == 905.0


def _lagging_run() -> tuple[Index, object]:
    scenario = with_tempo(load_scenario("happy_path").at_deployment_ranges(), LAGGING_TEMPO)
    result = simulate(scenario, "head", LAGGING_SEED, script=parse_script(list(LAGGING_SCRIPT)))
    return index_of(result.history), result


def test_a_lease_stamped_from_a_clock_lagging_past_the_start_is_positive_and_reclaimed() -> None:
    ix, result = _lagging_run()
    lagging = [
        op
        for op in ix.rows
        if row_of(op)["lease_expires"] > 0 and ix.time_of(row_of(op)["lease_expires"]) < 0 and op.run == "run-001"
    ]
    assert lagging, "the lagging clock stamped a lease before the world began, as in the open case"
    reaped = [
        op
        for op in ix.of_type(H.STORE, OpType.OK)
        if op.run == "run-001" and op.get("actor") == "reaper" and op.get("matched") and op.index > lagging[0].index
    ]
    assert reaped, "a reaper with a true clock reclaimed the run (T12 sees a positive lease in the past)"
    assert "every_run_terminates" not in result.violations  # type: ignore[attr-defined]


def test_a_statement_states_the_clock_it_read_on_the_same_axis_as_the_lease_it_wrote() -> None:
    """the ``clock_s`` (what the issuing process's clock showed) is a reading of that clock, epoch
    included: a lagging clock's stamp reads before the epoch, and its lease is that reading plus the
    lease, so ``lease_within_bound`` compares like with like and holds."""
    ix, result = _lagging_run()
    clocks = [op for op in ix.of_type(H.STORE, OpType.INVOKE)]
    assert clocks and all(EPOCH_S - 3601 <= op.get("clock_s") <= EPOCH_S + op.time_s + 3601 for op in clocks)
    lagging = [
        op
        for op in ix.rows
        if op.run == "run-001" and op.get("clock_s", EPOCH_S) < EPOCH_S and row_of(op)["lease_expires"]
    ]
    assert lagging, "the lagging clock read a time before the epoch"
    assert all(row_of(op)["lease_expires"] - op.get("clock_s") <= LEASE_S for op in lagging)
    verdict = result.verdicts["lease_within_bound"]  # type: ignore[attr-defined]
    assert verdict.judged > 0 and "lease_within_bound" not in result.violations  # type: ignore[attr-defined]


def test_a_users_cancel_reads_the_true_clock_plus_the_epoch() -> None:
    result = simulate("cancel_mid_run", "head", 3)
    cancels = [op for op in index_of(result.history).of_type(H.STORE, OpType.INVOKE) if op.get("site") == "cancel"]
    assert cancels and all(op.get("clock_s") == EPOCH_S + int(op.time_s) for op in cancels)
