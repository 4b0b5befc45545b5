"""Teeth: every historic-defect flag that changes a statement or decision shows as divergences."""

from __future__ import annotations

import pytest

from model.policy import HEAD
from sim.conform import runner
from sim.conform.checks import all_checks
from tests.conformance.conftest import need

pytestmark = pytest.mark.slow

FLAGGED = sorted({(flag, c.name) for c in all_checks() for flag in c.flags})
FLAGS = sorted({flag for flag, _ in FLAGGED})


@pytest.mark.parametrize("flag", FLAGS)
def test_a_historic_defect_switched_on_diverges_from_todays_php(flag: str) -> None:
    src = need("sqlite")
    checks = tuple(name for f, name in FLAGGED if f == flag)
    opts = runner.Options(
        src,
        ("sqlite",),
        examples=200,
        seed=3,
        checks=checks,
        shrink=False,
        env_overrides={"policy": HEAD.with_flags(**{flag: True})},
    )
    results = runner.run(opts)
    assert sum(r.unexplained for r in results) > 0, f"{flag} shows no divergence in {checks}"


def test_the_flags_with_teeth_cover_every_kb_flag_that_changes_a_statement() -> None:
    expected = {
        "kb1_finish_unguarded",
        "kb2_resume_position_by_count",
        "kb3_suspend_unguarded",
        "kb6_renew_trusts_changed_rows",
        "kb7_worker_settles_unguarded",
        "kb8_reaper_dispatch_failure_only_logged",
        "kb9_fence_survives_requeue",
        "kb10_unleased_segments",
        "kb13_fallback_chain_unknown",
    }
    assert expected <= set(FLAGS)
