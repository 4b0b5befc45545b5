"""The store's identity collation as a world property: ``[world] identity_collation``, ``host_names``
and ``pids``, ``simulate(collation=...)`` and ``leaselab run --collation``.

The owner guard's comparison is the one :func:`sim.world.store.unicode_ci_key` defines (shared with
``leaselab conform``'s MariaDB); binary, the default, leaves every history as it was.
"""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from checks import history as H
from leaselab.cli import app
from model.errors import LeaselabError
from model.policy import resolve_policy
from model.records import RunRow
from model.transitions import FinishRun, MarkPendingEffect, RenewLease, Requeue
from model.vocab import RunStatus, TerminationReason
from scenarios.loader import load_scenario, parse_scenario
from sim.world.simulate import build_world, simulate
from sim.world.store import Database, unicode_ci_key

runner = CliRunner()
HEAD = resolve_policy("head")
HOLDER = "worker:app-1:101"
NOW = 1_700_000_100


def _held(claimed_by: str = HOLDER) -> RunRow:
    return RunRow(1, "u", RunStatus.RUNNING, claimed_by, NOW + 500, started_at=NOW - 100, crdate=NOW - 100)


def _store(collation: str, row: RunRow) -> Database:
    db = Database(identity_collation=collation)
    db.put(row)
    return db


# ---- the comparison ----------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", ["worker:APP-1:101", "Worker:app-1:101", "worker:app-1:101 "])
def test_a_case_or_trailing_space_variant_renews_the_holders_lease_under_unicode_ci_only(caller: str) -> None:
    row = _held()
    result, after = _store("unicode_ci", row).update("u", RenewLease(caller, NOW))
    assert result.matched and after is not None
    assert after.claimed_by == HOLDER  # T4's SET leaves claimed_by as the holder wrote it
    assert after.lease_expires > row.lease_expires
    refused, same = _store("binary", row).update("u", RenewLease(caller, NOW))
    assert not refused.matched and same == row


def test_the_store_notes_whom_a_collated_match_was_over_and_nothing_else() -> None:
    db = _store("unicode_ci", _held())
    db.update("u", RenewLease("worker:APP-1:101", NOW))
    assert db.equated == ("worker:APP-1:101", HOLDER)
    db.update("u", RenewLease(HOLDER, NOW))
    assert db.equated is None  # compared equal: the collation decided nothing
    db.update("u", RenewLease("worker:app-2:101", NOW))
    assert db.equated is None  # refused


def test_a_collated_worlds_records_carry_the_holder_a_binary_worlds_never_do() -> None:
    seed = 10  # collated_hosts seed 10: a zombie worker renews over its collated twin's claim
    collated = simulate("collated_hosts", "head", seed)
    marked = [op for op in collated.history if op.op == H.STORE and "equated" in op.value]
    assert marked
    for op in marked:
        assert op.get("guard") != op.get("equated")
        assert str(op.get("guard")).lower() == str(op.get("equated")).lower()
    binary = simulate("collated_hosts", "head", seed, collation="binary")
    assert not any("equated" in op.value for op in binary.history)


@pytest.mark.parametrize(
    "caller", ["worker:app-1:1011", "worker:app_1:101", "worker:app-1: 101", " worker:app-1:101", "worker:app-2:101"]
)
def test_identities_that_differ_beyond_case_and_trailing_spaces_stay_distinct_under_unicode_ci(caller: str) -> None:
    """Near misses: a digit more, another punctuation mark, an inner or leading space, another host."""
    result, _ = _store("unicode_ci", _held()).update("u", RenewLease(caller, NOW))
    assert not result.matched


def test_the_collated_stamp_keeps_the_holder_and_the_collated_settle_clears_it() -> None:
    db = _store("unicode_ci", _held())
    stamped, row = db.update("u", MarkPendingEffect("worker:APP-1:101", "non_idempotent_write", NOW))
    assert stamped.matched and row is not None
    assert (row.claimed_by, row.pending_effect) == (HOLDER, "non_idempotent_write")
    settle = FinishRun(
        RunStatus.FAILED, TerminationReason.PROVIDER_FAILED, "X", 0, 0, owned_by="WORKER:APP-1:101", now=NOW
    )
    settled, row = db.update("u", settle)
    assert settled.matched and row is not None
    assert (row.status, row.claimed_by) == (RunStatus.FAILED, "")


def test_a_collated_requeue_unclaims_the_holders_row() -> None:
    result, row = _store("unicode_ci", _held()).update("u", Requeue("worker:APP-1:101", NOW))
    assert result.matched and row is not None
    assert (row.status, row.claimed_by, row.requeue_count) == (RunStatus.QUEUED, "", 1)


ascii_identity = st.text(alphabet="abAB-_: 01", max_size=8)


@given(holder=ascii_identity, caller=ascii_identity)
def test_the_owner_guard_matches_exactly_when_the_collation_equates_the_identities(holder: str, caller: str) -> None:
    row = _held(holder)
    binary, _ = _store("binary", row).update("u", RenewLease(caller, NOW))
    collated, _ = _store("unicode_ci", row).update("u", RenewLease(caller, NOW))
    assert binary.matched == (holder == caller)
    assert collated.matched == (holder.lower().rstrip(" ") == caller.lower().rstrip(" "))
    assert collated.matched == (unicode_ci_key(holder) == unicode_ci_key(caller))


def test_an_unknown_collation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown identity collation"):
        Database(identity_collation="latin1_swedish_ci")


# ---- the world's inputs --------------------------------------------------------------------------------

WORLD = """
name = "w"
[world]
workers = 2
hosts = 2
{extra}
[[runs]]
kind = "queued"
script = [[]]
"""


def _identities(extra: str) -> list[str]:
    world = build_world(parse_scenario(tomllib.loads(WORLD.format(extra=extra)), source="w.toml"), HEAD, 0)
    world.env.run(until=1.0)
    return sorted(p.identity for p in world.procs.alive.values() if p.kind == "worker")


def test_containers_named_apart_by_case_each_run_their_first_worker_as_pid_101() -> None:
    extra = 'host_names = ["app-1", "APP-1"]\npids = "per_host"'
    assert _identities(extra) == ["worker:APP-1:101", "worker:app-1:101"]


def test_by_default_hosts_are_h1_h2_and_pids_come_from_one_counter() -> None:
    assert _identities("") == ["worker:h1:101", "worker:h2:102"]
    assert _identities('host_names = ["app-1", "APP-1"]') == ["worker:APP-1:102", "worker:app-1:101"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ('host_names = ["app-1", "app-1"]', "world.host_names"),
        ('host_names = ["app:1"]', "world.host_names.0"),
        ('host_names = ["app 1"]', "world.host_names.0"),
        ('pids = "random"', "world.pids"),
        ('identity_collation = "latin1"', "world.identity_collation"),
    ],
)
def test_a_bad_identity_input_is_one_line_naming_file_and_field(extra: str, field: str) -> None:
    with pytest.raises(LeaselabError) as caught:
        parse_scenario(tomllib.loads(WORLD.format(extra=extra)), source="w.toml")
    message = str(caught.value)
    assert message.startswith(f"w.toml: {field}") and "\n" not in message


# ---- simulations ------------------------------------------------------------------------------------


def test_binary_as_written_or_asked_for_is_the_same_history() -> None:
    plain = simulate("default", "head", 3)
    assert simulate("default", "head", 3, collation="binary").digest == plain.digest
    chaos = next(op for op in plain.history if op.op == H.PHASE)
    assert "collation" not in chaos.value


def test_a_unicode_ci_world_says_so_in_its_chaos_record() -> None:
    result = simulate("single_run", "head", 0, collation="unicode_ci")
    chaos = next(op for op in result.history if op.op == H.PHASE)
    assert chaos.value["collation"] == "unicode_ci"
    # the collation decides nothing here (one identity per process), only the record differs
    assert result.digest != simulate("single_run", "head", 0).digest


def test_the_collation_override_replaces_the_scenarios_own() -> None:
    assert load_scenario("collated_hosts").world.identity_collation == "unicode_ci"
    as_written = simulate("collated_hosts", "head", 10)
    assert simulate("collated_hosts", "head", 10, collation="unicode_ci").digest == as_written.digest
    assert simulate("collated_hosts", "head", 10, collation="binary").digest != as_written.digest


def test_simulate_refuses_an_unknown_collation_naming_it() -> None:
    with pytest.raises(LeaselabError) as caught:
        simulate("happy_path", "head", 0, collation="utf8mb4_bin")
    assert caught.value.field == "collation"


def test_run_takes_the_collation_and_repeats_it_in_the_reproduce_line() -> None:
    args = ["run", "collated_hosts", "--seed", "10", "--collation", "unicode_ci"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "--collation unicode_ci" in result.stdout.splitlines()[-1]


def test_run_refuses_a_bad_collation_in_one_line() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--collation", "nocase"])
    assert result.exit_code == 2
    assert "--collation" in result.stderr and len(result.stderr.splitlines()) == 1
