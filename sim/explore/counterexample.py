"""Counterexample files: everything a reviewer needs to replay one violation exactly.

A small TOML file: scenario (library name or path), policy and flags, seed, the fault
profile in effect (its outage windows and kinds matter on replay; its probabilities do
not, because replay runs in script mode), the minimal fault script, the invariant it
violates and the history digest. ``replay`` re-runs it and compares digests.

The file starts with ``version = 1`` (:data:`FORMAT_VERSION`); :func:`read` refuses a file without
it (saying how to add it), of another version, with an unknown key, or with any value out of its
range (a negative seed or fault index, an infinite tempo, a NaN fault value), before anything runs:
bad input exits 2, and exit 3 stays for a replay that really diverged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from checks import INVARIANTS
from model.errors import LeaselabError, shown, unknown_name
from model.policy import FLAG_NAMES, preset
from scenarios.families import MAX_SECONDS
from scenarios.intensity import Tempo, with_tempo
from scenarios.limits import MAX_SEED
from scenarios.loader import load_scenario
from scenarios.messages import validation_error
from scenarios.schema import FaultsModel, Scenario
from scenarios.script import Fault, parse_script
from scenarios.user_files import read_toml
from sim.explore.costs import check_cost, is_cost, with_cost
from sim.explore.profiles import BURST, NEEDS, for_need, need_of
from sim.world.conditioned import simulate_cuts
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
    'unexplained: <witness shape>' (:mod:`register.mechanism`); '' when not recorded."""
    cuts: tuple[tuple[int, int], ...] = ()
    """A guided branch's cuts (records kept, suffix seed; :mod:`sim.explore.footholds`): after each,
    the run is drawn afresh from the suffix seed (its first request at the profile's raised rates, or
    decided by the need its seed carries, :func:`sim.explore.profiles.need_of`). Empty for a plain run."""

    def effective_scenario(self) -> Scenario:
        return with_tempo(load_scenario(self.scenario), self.tempo).with_faults(self.profile)

    def run(self) -> SimulationResult:
        control = TieControl(reverse=frozenset(self.ties)) if self.ties else None
        if self.cuts:
            result = simulate_cuts(
                self.effective_scenario(),
                self.policy,
                self.seed,
                script=self.faults,
                cuts=self.cuts,
                burst=BURST,
                suffix_for=lambda suffix_seed: for_need(self.profile, need_of(suffix_seed)),
                flags=dict(self.flags),
            )
        else:
            result = simulate(
                self.effective_scenario(),
                self.policy,
                self.seed,
                flags=dict(self.flags),
                script=self.faults,
                ties=control,
            )
        return with_cost(result, self.invariant, witness=True) if is_cost(self.invariant) else result


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
        f"version = {FORMAT_VERSION}",
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
        *([f"cuts = {_toml_value([list(c) for c in cx.cuts])}"] if cx.cuts else []),
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


FORMAT_VERSION = 1
"""The counterexample file format this leaselab writes and reads (the ``version`` key)."""
TEMPO_FACTOR_BOUNDS = (0.001, 1000.0)
"""The latency factors a tempo may write: the swarm draws 1/30 to 3."""


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class TempoTable(_Strict):
    """``[tempo]``: the timing the swarm drew (see :class:`scenarios.intensity.Tempo`)."""

    latency_factor: Annotated[float, Field(ge=TEMPO_FACTOR_BOUNDS[0], le=TEMPO_FACTOR_BOUNDS[1])] = 1.0
    store_latency_s: Annotated[float, Field(ge=0.0, le=MAX_SECONDS)] | None = None


Tie = Annotated[
    tuple[Annotated[float, Field(ge=0.0, le=MAX_SECONDS)], Annotated[int, Field(ge=-1, le=1)]],
    BeforeValidator(_as_tuple),
]
"""A reversed tie: the simulated time and the simpy priority of an event group (0 urgent, 1 normal;
-1 is the kernel's re-scheduled stop, :mod:`sim.world.kernel`)."""


CutPair = Annotated[
    tuple[Annotated[int, Field(ge=1, le=10**9)], Annotated[int, Field(ge=0, lt=len(NEEDS) << 32)]],
    BeforeValidator(_as_tuple),
]
"""A guided branch's cut: records kept, suffix seed (32 random bits, a need's code above them,
:func:`sim.explore.profiles.seed_with_need`)."""


class CounterexampleFile(_Strict):
    """What a counterexample file may say; every key is known, every number bounded."""

    version: int
    scenario: Annotated[str, Field(min_length=1, max_length=4096)]
    policy: str
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    invariant: str
    digest: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
    explorer: str = ""
    note: str = ""
    mechanism: Annotated[str, Field(max_length=4096)] = ""
    faults: list[str]
    ties: list[Tie] = Field(default_factory=list)
    cuts: list[CutPair] = Field(default_factory=list)
    flags: dict[str, bool] = Field(default_factory=dict)
    tempo: TempoTable | None = None
    profile: FaultsModel = FaultsModel()


PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""Where the repository's own counterexample files name their scenario files from (they are written
from the root: ``register/entries/sync/default_sync.toml``)."""


def locate_scenario(spec: str, file: Path) -> str:
    """The scenario file a counterexample names, found from wherever it is replayed: as written
    (from the working directory), else beside the counterexample file, else from the project root.
    A library name, an absolute path or a path found nowhere is returned as written (a path found
    nowhere is then reported by ``load_scenario``, naming the field)."""
    written = Path(spec)
    if written.suffix != ".toml" or written.is_absolute() or written.exists():
        return spec
    for base in (file.resolve().parent, PROJECT_ROOT):
        if (base / written).is_file():
            return str(base / written)
    return spec


def read(path: Path) -> Counterexample:
    """A counterexample file, checked whole before anything runs: one LeaselabError naming the
    file and field otherwise (exit 2), so a replay that runs can only diverge for a real reason."""
    source = str(path)
    data = read_toml(path, what="counterexample file")
    _check_version(data, source)
    try:
        doc = CounterexampleFile.model_validate(data)
    except ValidationError as error:
        hint = "see sim/explore/counterexample.py"
        raise validation_error(error, model=CounterexampleFile, source=source, hint=hint) from None
    preset(doc.policy, source=source)
    for name in doc.flags:
        if name not in FLAG_NAMES:
            what, hint = unknown_name("flag", name, FLAG_NAMES, see="`leaselab policies`")
            raise LeaselabError(what, file=source, field=f"flags.{name}", hint=hint)
    if is_cost(doc.invariant):
        try:
            check_cost(doc.invariant)
        except LeaselabError as error:
            raise LeaselabError(error.what, file=source, field="invariant", hint=error.hint) from None
    elif doc.invariant not in INVARIANT_NAMES:
        what, hint = unknown_name("invariant", doc.invariant, INVARIANT_NAMES, see="checks/")
        raise LeaselabError(what, file=source, field="invariant", hint=hint)
    scenario = locate_scenario(doc.scenario, path)
    try:
        load_scenario(scenario)
    except LeaselabError as error:  # the scenario's own field, if any, goes into what is wrong
        what = ": ".join(p for p in (error.field, error.what) if p and p != "scenario")
        raise LeaselabError(what, file=source, field="scenario", hint=error.hint) from None
    tempo = None if doc.tempo is None else Tempo(doc.tempo.latency_factor, doc.tempo.store_latency_s)
    cx = Counterexample(
        scenario=scenario,
        policy=doc.policy,
        seed=doc.seed,
        invariant=doc.invariant,
        digest=doc.digest,
        faults=tuple(parse_script(doc.faults, source=source)),
        profile=doc.profile,
        flags=dict(doc.flags),
        explorer=doc.explorer,
        note=doc.note,
        mechanism=doc.mechanism,
        ties=tuple(doc.ties),
        cuts=tuple(doc.cuts),
        tempo=tempo,
    )
    try:
        cx.effective_scenario()
    except ValidationError as error:
        where = validation_error(error, model=Scenario, source=source).field
        what = f"puts the scenario's {where} out of its range"
        raise LeaselabError(what, file=source, field="tempo", hint="see scenarios/schema.py") from None
    return cx


def _check_version(data: Mapping[str, Any], source: str) -> None:
    """The format version comes first: a file without one, or of another version, says how to fix it."""
    if "version" not in data:
        what = f"no format version: if leaselab wrote this file, add 'version = {FORMAT_VERSION}' as its first line"
        raise LeaselabError(what, file=source, field="version")
    version = data["version"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        what = f"format version {shown(version)} is not one this leaselab reads (version {FORMAT_VERSION})"
        raise LeaselabError(what, file=source, field="version", hint="replay it with the leaselab that wrote it")
