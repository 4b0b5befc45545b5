"""MariaDB's owner-guard divergence is the store's identity collation, one engine property defined once.

``leaselab conform`` compares MariaDB with a model store of ``identity_collation="unicode_ci"``; the
simulations' ``[world] identity_collation`` builds that same store (:class:`sim.world.store.Database`,
whose :func:`~sim.world.store.unicode_ci_key` is the comparison). Switched back to binary, the model
diverges from MariaDB on T4/T5/T7/T11 exactly where the collation equates two distinct identities.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from model.policy import resolve_policy
from scenarios.loader import load_scenario
from scenarios.overrides import COLLATIONS as OVERRIDE_COLLATIONS
from scenarios.schema import WorldModel
from sim.conform import runner
from sim.conform.checks import ENGINE_PROPERTIES, ModelEnv
from sim.world.simulate import build_world
from sim.world.store import COLLATIONS
from tests.conformance.conftest import leftovers, need, server_pids

OWNER_GUARDED = ("T4", "T5", "T7", "T11")


def test_the_world_and_conform_name_the_same_collations() -> None:
    assert get_args(WorldModel.model_fields["identity_collation"].annotation) == COLLATIONS == OVERRIDE_COLLATIONS
    assert {props["collation"] for props in ENGINE_PROPERTIES.values()} == set(COLLATIONS)


def test_conforms_mariadb_store_is_the_store_a_unicode_ci_world_builds() -> None:
    conform = runner.model_env("mariadb", {}).database()
    world = build_world(load_scenario("collated_hosts"), resolve_policy("head"), 0).db
    assert type(conform) is type(world)
    assert conform.collation == world.collation == "unicode_ci"
    assert ModelEnv().database().collation == runner.model_env("sqlite", {}).database().collation == "binary"


def _collation_known() -> runner.Known:
    return runner.Known("*", ("mariadb",), (), "identity_collation", "the collation equates the identities")


@pytest.mark.slow
def test_mariadbs_owner_guard_divergence_is_exactly_the_collation(private_tmp: Path) -> None:
    src = need("mariadb")
    before = set(leftovers(private_tmp))
    opts = runner.Options(src, ("mariadb",), examples=150, seed=3, checks=OWNER_GUARDED, shrink=False)
    as_engine = runner.run(opts)
    assert len(as_engine) == len(OWNER_GUARDED)
    assert sum(r.divergences for r in as_engine) == 0, [(r.check, r.divergences) for r in as_engine]
    known = [*runner.load_known(), _collation_known()]
    binary = runner.run(
        runner.Options(
            src, ("mariadb",), 150, 3, env_overrides={"collation": "binary"}, checks=OWNER_GUARDED, known=known,
            shrink=False,
        )
    )  # fmt: skip
    assert sum(r.divergences for r in binary) > 0, "a binary model store meets no collated identity"
    # every one of them is an identity the collation equates with the holder's, nothing else
    assert sum(r.unexplained for r in binary) == 0, [(r.check, r.unexplained) for r in binary]
    assert set(leftovers(private_tmp)) <= before and not server_pids(private_tmp)
