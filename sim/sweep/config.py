"""Sweep configuration files (TOML): the schema, the loader and the expansion into tasks.

A sweep configuration names policies (a preset plus flag overrides, shown under a label)
and one or more grids (scenarios x fault intensities x tool-latency ratios x transports x
seeds). Every policy of a grid sees the same seeds, so policies compare pairwise. The
built-in ADR review (:func:`sim.review.builtin.builtin_review`) is such a file shipped in the package.

Bad input is reported like a bad scenario: one :class:`model.errors.LeaselabError` naming the
file and the field (``grid.0.intensities.1``). Unknown keys are errors: a typo must not
silently shrink a sweep. Knows the policy presets and the scenario loader; nothing about
executors, files of results or the world.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from itertools import product
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from model.errors import LeaselabError, choices, shown, unknown_name
from model.policy import FLAG_NAMES, PRESET_ALIASES, PRESETS
from scenarios.limits import MAX_SEEDS_PER_CELL
from scenarios.loader import library_names, load_scenario
from scenarios.messages import validation_error
from scenarios.schema import Scenario
from scenarios.user_files import loads_toml, read_toml
from sim.sweep.task import SweepTask

Label = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.+=-]+$")]
Intensity = Annotated[float, Field(ge=0.0, le=100.0)]
Ratio = Annotated[float, Field(gt=0.0, le=100.0)]
LIBRARY = "library"
SCENARIO_KEYS = frozenset({"runs", "world", "provider", "tools", "faults", "script", "description"})
"""Top-level keys of a scenario file that no sweep configuration has: a scenario given as CONFIG."""


class _Strict(BaseModel):
    """Unknown keys, a bool or a string for a number, NaN and infinities are errors, not coerced."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class PolicyEntry(_Strict):
    """One design under test: a preset, flag overrides, and the label reports show."""

    label: Label
    preset: str
    flags: dict[str, bool] = Field(default_factory=dict)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        if value not in PRESETS and value not in PRESET_ALIASES:
            raise ValueError(f"unknown preset {shown(value)}; one of: {choices([*PRESETS, *PRESET_ALIASES])}")
        return value

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, value: dict[str, bool]) -> dict[str, bool]:
        for name in value:
            if name not in FLAG_NAMES:
                what, hint = unknown_name("flag", name, FLAG_NAMES, see="`leaselab policies`")
                raise ValueError(f"{name}: {what}" if "did you mean" in what else f"{name}: {what}; {hint}")
        return dict(sorted(value.items()))

    @property
    def flag_items(self) -> tuple[tuple[str, bool], ...]:
        return tuple(sorted(self.flags.items()))


class GridEntry(_Strict):
    """One cartesian product. Empty ``latency_ratios`` / ``transports`` / ``policies`` mean
    "the scenario as written" / "the scenario as written" / "every policy"."""

    name: Label
    scenarios: Literal["library"] | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    intensities: Annotated[list[Intensity], Field(min_length=1)] = Field(default_factory=lambda: [1.0])
    latency_ratios: list[Ratio] = Field(default_factory=list)
    transports: list[Literal["sync", "async"]] = Field(default_factory=list)
    collations: list[Literal["binary", "unicode_ci"]] = Field(default_factory=list)
    """The store's identity collation (``[world] identity_collation``); empty = as each scenario says."""
    fault_ranges: Literal["library", "deployment"] = "library"
    """'deployment': every scenario widened to the fault ranges of real deployments
    (:meth:`scenarios.schema.Scenario.at_deployment_ranges`: clock skew up to an hour either way,
    store stalls up to two leases); 'library': the ranges each scenario declares."""
    policies: list[str] = Field(default_factory=list)
    seeds: Annotated[int, Field(ge=1, le=MAX_SEEDS_PER_CELL)] | None = None

    @model_validator(mode="after")
    def _no_repeats(self) -> GridEntry:
        for name in ("intensities", "latency_ratios", "transports", "collations", "policies"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: a value is listed twice (rows would be duplicated)")
        if isinstance(self.scenarios, list) and len(set(self.scenarios)) != len(self.scenarios):
            raise ValueError("scenarios: a scenario is listed twice (rows would be duplicated)")
        return self

    def scenario_specs(self) -> list[str]:
        return library_names() if self.scenarios == LIBRARY else list(self.scenarios)


class SweepConfig(_Strict):
    """A whole sweep. ``seeds`` per cell (a grid may override it), ``seeds_per_task`` per shard."""

    name: Label
    seeds: Annotated[int, Field(ge=1, le=MAX_SEEDS_PER_CELL)]
    seeds_per_task: Annotated[int, Field(ge=1, le=1_000_000)] = 25
    policy: Annotated[list[PolicyEntry], Field(min_length=1)]
    grid: Annotated[list[GridEntry], Field(min_length=1)]
    _base: Path = PrivateAttr(default_factory=Path.cwd)
    _source: str = PrivateAttr(default="")

    @model_validator(mode="after")
    def _cross_references(self) -> SweepConfig:
        labels = [p.label for p in self.policy]
        if len(set(labels)) != len(labels):
            raise ValueError("policy: two policies share a label")
        names = [g.name for g in self.grid]
        if len(set(names)) != len(names):
            raise ValueError("grid: two grids share a name")
        for i, grid in enumerate(self.grid):
            for j, label in enumerate(grid.policies):
                if label not in labels:
                    raise ValueError(f"grid.{i}.policies.{j}: no [[policy]] is labelled '{label}'")
        return self

    @property
    def base(self) -> Path:
        """The directory relative scenario paths resolve against (the config file's)."""
        return self._base

    @property
    def source(self) -> str:
        """The file it was read from ('' when built in code)."""
        return self._source

    def resolve(self, spec: str) -> str:
        """A scenario spec as the loader takes it: a library name, or a path relative to the config file."""
        if spec.endswith(".toml") or "/" in spec:
            path = Path(spec)
            return str(path if path.is_absolute() else (self._base / path).resolve())
        return spec

    def policies_of(self, grid: GridEntry) -> list[PolicyEntry]:
        return [p for p in self.policy if not grid.policies or p.label in grid.policies]

    def tasks(self) -> list[SweepTask]:
        return list(iter_tasks(self))

    def iter_tasks(self) -> Iterator[SweepTask]:
        """The tasks one by one, in :meth:`tasks` order (a sweep plans lazily)."""
        return iter_tasks(self)

    def size(self) -> tuple[int, int]:
        """(tasks, simulations), by arithmetic: a sweep of 10^8 seeds is counted without planning it."""
        tasks = simulations = 0
        for grid in self.grid:
            seeds = grid.seeds or self.seeds
            cells = (
                len(grid.scenario_specs())
                * len(grid.intensities)
                * len(grid.latency_ratios or [0.0])
                * len(grid.transports or [""])
                * len(grid.collations or [""])
                * len(self.policies_of(grid))
            )
            tasks += cells * -(-seeds // self.seeds_per_task)
            simulations += cells * seeds
        return tasks, simulations

    def fingerprint(self) -> str:
        """A digest of everything that decides the rows: the configuration and every file scenario.

        Library scenarios are covered by the package version a sweep directory also records.
        """
        config = self.model_dump(mode="json")
        for grid_doc in config["grid"]:
            if not grid_doc["collations"]:  # as written: the fingerprint a sweep had before the axis existed
                del grid_doc["collations"]
        doc: dict[str, Any] = {"config": config, "files": {}}
        for grid in self.grid:
            for spec in grid.scenario_specs():
                resolved = self.resolve(spec)
                if resolved != spec or Path(resolved).suffix == ".toml":
                    doc["files"][spec] = _scenario_doc(load_scenario(resolved))
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


_IDENTITY_DEFAULTS = {"identity_collation": "binary", "host_names": [], "pids": "global"}
"""The world's identity inputs as written when a scenario leaves them out."""


def _scenario_doc(scenario: Scenario) -> dict[str, Any]:
    """A file scenario as the fingerprint reads it: identity inputs left at their defaults are dropped,
    so a configuration's fingerprint is what it was before those inputs existed."""
    doc = scenario.model_dump(mode="json")
    world = doc["world"]
    for name, default in _IDENTITY_DEFAULTS.items():
        if world.get(name) == default:
            del world[name]
    return doc


def iter_tasks(config: SweepConfig) -> Iterator[SweepTask]:
    """grids x scenarios x intensities x latency ratios x transports x collations x seed blocks x policies.

    Policies are innermost so that the paired tasks of one seed block are adjacent: a
    partially finished sweep already holds complete policy comparisons.
    """
    step = config.seeds_per_task
    for grid in config.grid:
        seeds = grid.seeds or config.seeds
        policies = config.policies_of(grid)
        for spec in grid.scenario_specs():
            scenario = config.resolve(spec)
            for intensity in grid.intensities:
                for ratio in grid.latency_ratios or [0.0]:
                    overrides = product(_or_as_written(grid.transports), _or_as_written(grid.collations))
                    for transport, collation in overrides:
                        for start in range(0, seeds, step):
                            count = min(step, seeds - start)
                            for entry in policies:
                                yield SweepTask(
                                    scenario=scenario,
                                    policy=entry.preset,
                                    seed_start=start,
                                    seed_count=count,
                                    intensity=intensity,
                                    flags=entry.flag_items,
                                    grid=grid.name,
                                    label=entry.label,
                                    latency_ratio=ratio,
                                    transport=transport,
                                    fault_ranges=_ranges(grid.fault_ranges),
                                    collation=collation,
                                )


def _ranges(fault_ranges: str) -> str:
    """The task's ``fault_ranges``: '' for the scenario's own (so library tasks keep their shard keys)."""
    return "" if fault_ranges == "library" else fault_ranges


def _or_as_written(values: list[Literal["sync", "async"]] | list[Literal["binary", "unicode_ci"]]) -> list[str]:
    """The values of an override axis, or [''] (the scenario as written) when the grid lists none."""
    return list(values) or [""]


def parse_config(data: dict[str, Any], *, source: str, base: Path | None = None) -> SweepConfig:
    """Validate a decoded TOML mapping; check every scenario loads; the first error becomes one line."""
    if "grid" not in data and SCENARIO_KEYS & set(data):
        raise LeaselabError(
            "is a scenario file, not a sweep configuration",
            file=source,
            hint="run it with `leaselab run FILE`, or name it in a [[grid]]'s scenarios",
        )
    for i, grid in enumerate(data.get("grid") or ()):
        if isinstance(grid, dict) and grid.get("scenarios") == []:
            raise LeaselabError(
                'needs at least one scenario, or "library" for every library scenario',
                file=source,
                field=f"grid.{i}.scenarios",
                hint="see sim/sweep/config.py",
            )
    try:
        config = SweepConfig.model_validate(data)
    except ValidationError as error:
        raise validation_error(error, model=SweepConfig, source=source, hint="see sim/sweep/config.py") from None
    config._base = base if base is not None else Path.cwd()
    config._source = source
    for i, grid in enumerate(config.grid):
        if grid.scenarios == LIBRARY:
            continue
        for j, spec in enumerate(grid.scenario_specs()):
            try:
                load_scenario(config.resolve(spec))
            except LeaselabError as error:  # the scenario's own field, if any, goes into what is wrong
                what = ": ".join(p for p in (error.field, error.what) if p and p != "scenario")
                raise LeaselabError(what, file=source, field=f"grid.{i}.scenarios.{j}", hint=error.hint) from None
    return config


def load_config(path: str | Path) -> SweepConfig:
    """A sweep configuration from a TOML file, or the built-in review when given its bare name."""
    path = Path(path)
    data = read_toml(path, what="sweep configuration")
    return parse_config(data, source=str(path), base=path.resolve().parent)


def loads_config(text: str, *, source: str = "<string>", base: Path | None = None) -> SweepConfig:
    return parse_config(loads_toml(text, source=source), source=source, base=base)


def as_config(config: SweepConfig | str | Path) -> SweepConfig:
    """A SweepConfig from itself or a file path (what the library API accepts)."""
    return config if isinstance(config, SweepConfig) else load_config(config)
