"""Module paths from before the stages got their folders, importable for one more release.

Until 0.2, ``sim/`` was flat (``sim.simulate``, ``sim.kernel``, ``sim.sweep_config``, ...). Each
old path still imports, as the module at its new place, with a :class:`DeprecationWarning`
naming that place; the old modules that are packages now (``sim.world``, ``sim.sweep``,
``sim.review``, ``sim.bench``) still hand out the names they used to define, also with a
warning. Nothing inside leaselab uses an old path (``tests/test_layers.py`` checks), and the
README's layout section lists the moves. Remove this module in the release after 0.2.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MOVED_MODULES: dict[str, str] = {
    "sim.simulate": "sim.world.simulate",
    "sim.kernel": "sim.world.kernel",
    "sim.store": "sim.world.store",
    "sim.faults": "sim.world.faults",
    "sim.recorder": "sim.world.recorder",
    "sim.workload": "sim.world.workload",
    "sim.processes": "sim.world.processes",
    "sim.sync_driver": "sim.world.sync_driver",
    "sim.intensity": "scenarios.intensity",
    "sim.overrides": "scenarios.overrides",
    "sim.sweep_config": "sim.sweep.config",
    "sim.sweep_dir": "sim.sweep.directory",
    "sim.sweep_job": "sim.sweep.job",
    "sim.sweep_rows": "sim.sweep.rows",
    "sim.sweep_task": "sim.sweep.task",
    "sim.run_metrics": "sim.sweep.metrics",
    "sim.toml_out": "sim.sweep.toml_out",
    "sim.review_jobs": "sim.review.jobs",
    "sim.bench_layers": "sim.bench.layers",
    "sim.bench_search": "sim.bench.search",
    "sim.bench_stats": "sim.bench.stats",
    "sim.sweep_bench": "sim.bench.sweep",
    "leaselab.executors": "sim.sweep.executors",
}
"""Old flat module -> its module now."""


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old path goes in the next release", DeprecationWarning, stacklevel=3)


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the already-imported module at its new place (one module object)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the import system stamped the old spec on it; keep the real one


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old flat paths of :data:`MOVED_MODULES` and nothing else."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        _warn(fullname, new)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once per process."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())


def old_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A package ``__getattr__`` handing out the names its old flat module defined (name -> new module)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        _warn(f"{package}.{name}", f"{home}.{name}")
        return getattr(importlib.import_module(home), name)

    return __getattr__
