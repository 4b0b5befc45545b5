"""Counterexample files: everything a reviewer needs to replay one violation exactly.

A small TOML file: scenario (library name or path), policy and flags, seed, the fault
profile in effect (its outage windows and kinds matter on replay; its probabilities do
not, because replay runs in script mode), the minimal fault script, the invariant it
violates and the history digest. ``replay`` re-runs it and compares digests.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model.errors import LeaselabError
from model.invariants import INVARIANTS
from model.policy import parse_flag_value, preset
from scenarios.intensity import Tempo, with_tempo
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel, Scenario
from scenarios.script import Fault, parse_script
from sim.world.kernel import TieControl, TieKey
from sim.world.simulate import SimulationResult, simulate

INVARIANT_NAMES = tuple(inv.name for inv in INVARIANTS)

NONDETERMINISM_CAUSES = (
    "the scenario file or the library scenario changed since the counterexample was written; "
    "the model or the world changed (a new request, a different recording); "
    "code iterating a set, or a dict built in a hash-dependent order, decides scheduling; "
    "something read the wall clock or the global random module instead of the simulation's Random; "
    "a different version of simpy, pydantic or Python"
)


@dataclass(frozen=True)
class Counterexample:
    scenario: str
    policy: str
    seed: int
    invariant: str
    digest: str
    faults: tuple[Fault, ...]
    profile: FaultsModel
    flags: Mapping[str, bool] = field(default_factory=dict)
    explorer: str = ""
    note: str = ""
    ties: tuple[TieKey, ...] = ()
    tempo: Tempo | None = None
    """The timing the swarm drew (None: the scenario's own); replay needs it."""
    mechanism: str = ""
    """What the violation shows, as its shrink kept it: a finding or non-guarantee id, or
    'unexplained: <witness shape>' (:mod:`scenarios.findings.mechanism`); '' when not recorded."""

    def effective_scenario(self) -> Scenario:
        return with_tempo(load_scenario(self.scenario), self.tempo).with_faults(self.profile)

    def run(self) -> SimulationResult:
        control = TieControl(reverse=frozenset(self.ties)) if self.ties else None
        return simulate(
            self.effective_scenario(), self.policy, self.seed, flags=dict(self.flags), script=self.faults, ties=control
        )


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def to_toml(cx: Counterexample) -> str:
    lines = [
        "# leaselab counterexample: replay with `leaselab replay <this file>`",
        f"scenario = {_toml_value(cx.scenario)}",
        f"policy = {_toml_value(cx.policy)}",
        f"seed = {cx.seed}",
        f"invariant = {_toml_value(cx.invariant)}",
        f"digest = {_toml_value(cx.digest)}",
        f"explorer = {_toml_value(cx.explorer)}",
        f"note = {_toml_value(cx.note)}",
        *([f"mechanism = {_toml_value(cx.mechanism)}"] if cx.mechanism else []),
        "faults = [",
        *[f"  {_toml_value(f.text())}," for f in cx.faults],
        "]",
        f"ties = {_toml_value([[t, p] for t, p in cx.ties])}",
        "",
        "[flags]",
        *[f"{k} = {_toml_value(v)}" for k, v in cx.flags.items()],
    ]
    if cx.tempo is not None:
        lines += ["", "[tempo]", *[f"{k} = {_toml_value(v)}" for k, v in cx.tempo.document().items()]]
    for family, table in cx.profile.model_dump().items():
        lines += ["", f"[profile.{family}]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    return "\n".join(lines) + "\n"


def write(cx: Counterexample, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(to_toml(cx), encoding="utf-8")
    tmp.replace(path)
    return path


def _require(data: Mapping[str, Any], key: str, kind: type, source: str) -> Any:
    if key not in data:
        raise LeaselabError("missing field", file=source, field=key)
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LeaselabError(f"must be {kind.__name__}", file=source, field=key)
    return value


def read(path: Path) -> Counterexample:
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LeaselabError("no such counterexample file", file=source) from None
    except (OSError, UnicodeDecodeError) as error:
        raise LeaselabError(f"cannot read: {error}", file=source) from None
    except tomllib.TOMLDecodeError as error:
        raise LeaselabError(f"bad TOML: {error}", file=source) from None
    policy = _require(data, "policy", str, source)
    preset(policy, source=source)
    flags_table = data.get("flags", {})
    if not isinstance(flags_table, dict):
        raise LeaselabError("must be a table", file=source, field="flags")
    flags = {name: parse_flag_value(name, value, source=source) for name, value in flags_table.items()}
    faults = _require(data, "faults", list, source)
    if not all(isinstance(f, str) for f in faults):
        raise LeaselabError("every fault must be a string", file=source, field="faults")
    try:
        profile = FaultsModel.model_validate(data.get("profile", {}))
    except ValidationError as error:
        first = error.errors()[0]
        where = "profile." + ".".join(str(p) for p in first.get("loc", ()))
        raise LeaselabError(str(first.get("msg", "invalid")), file=source, field=where) from None
    scenario = _require(data, "scenario", str, source)
    try:
        load_scenario(scenario)
    except LeaselabError as error:
        raise LeaselabError(error.what, file=source, field="scenario", hint=error.hint) from None
    invariant = _require(data, "invariant", str, source)
    if invariant not in INVARIANT_NAMES:
        raise LeaselabError(
            f"unknown invariant '{invariant}'",
            file=source,
            field="invariant",
            hint="valid: " + ", ".join(INVARIANT_NAMES),
        )
    return Counterexample(
        scenario=scenario,
        policy=policy,
        seed=_require(data, "seed", int, source),
        invariant=invariant,
        digest=_require(data, "digest", str, source),
        faults=tuple(parse_script(faults, source=source)),
        profile=profile,
        flags=flags,
        explorer=str(data.get("explorer", "")),
        note=str(data.get("note", "")),
        mechanism=str(data.get("mechanism", "")),
        ties=_ties(data.get("ties", []), source),
        tempo=_tempo(data.get("tempo"), source),
    )


def _tempo(raw: Any, source: str) -> Tempo | None:
    if raw is None:
        return None
    keys = {"latency_factor", "store_latency_s"}
    if (
        not isinstance(raw, dict)
        or not set(raw) <= keys
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in raw.values())
    ):
        raise LeaselabError("must be a table of positive numbers", file=source, field="tempo", hint=", ".join(keys))
    store = raw.get("store_latency_s")
    return Tempo(float(raw.get("latency_factor", 1.0)), None if store is None else float(store))


def _ties(raw: Any, source: str) -> tuple[TieKey, ...]:
    if not isinstance(raw, list) or not all(
        isinstance(t, list) and len(t) == 2 and isinstance(t[0], int | float) and isinstance(t[1], int) for t in raw
    ):
        raise LeaselabError("must be a list of [time, priority] pairs", file=source, field="ties")
    return tuple((float(t[0]), int(t[1])) for t in raw)
