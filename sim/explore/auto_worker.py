"""One automatic mutant judged in a fresh process: ``python -m sim.explore.auto_worker IN.json OUT.json``.

The mutated module must be the one every importer sees, ``from model.hooks import x`` included, so the
mutant cannot be patched into a process that already imported the model: this process installs an
import hook that serves the mutant's source for its module *before* anything of the model is imported
(this module imports nothing of the project at its top; ``sim`` and ``sim.explore`` import nothing
either), then runs, in order:

1. the import of the mutated module (an error here: the mutant is *crashing*);
2. the head sweep of the property suite (:mod:`sim.explore.sweep_mutants`): the swarm's draws on every
   library scenario, every fault family allowed, one seed; per draw, whether a fault took effect, the
   invariants violated and those no registered finding or non-guarantee explains. A Python error
   raised out of a simulation (the runtime crashed the harness) makes the mutant *crashing*;
3. the unit tests of the runtime (``tests/model`` by default) through ``pytest.main``, stopping at the
   first failure; the first failing test is recorded.

IN.json: ``{"module": "model.hooks" | null, "source": str | null, "simulations": int, "seed": int,
"tests": [path] | [], "scenarios": [name] | null}``; a null module judges the unmutated tree (the
baseline the paired comparison needs). OUT.json: ``{"crashed": str | null, "draws": [[scenario,
number, fired, [violated], [unexplained]], ...] (draws with a violation only), "simulations": int,
"fired": int, "tests_failed": str | null, "tests_rc": int | null, "sweep_s": float, "tests_s": float,
"cpu_s": float}`` (``cpu_s``: the whole process, imports included).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any


class CosmicRayTestingException(Exception):
    """The exception cosmic-ray's exception replacer names in a mutated ``except`` clause."""


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, name: str, source: str, path: str) -> None:
        self.name, self.source, self.path = name, source, path

    def create_module(self, spec: Any) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["CosmicRayTestingException"] = CosmicRayTestingException
        exec(compile(self.source, self.path, "exec"), module.__dict__)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, source: str, path: str) -> None:
        self.loader = _MutantLoader(name, source, path)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.loader.name:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader, origin=self.loader.path)


def install(module: str, source: str, root: Path) -> None:
    """Serve ``source`` for ``module`` from now on; the module must not be imported yet."""
    if module in sys.modules:
        raise RuntimeError(f"{module} is already imported: the mutant would not be seen")
    path = str(root / (module.replace(".", "/") + ".py"))
    sys.meta_path.insert(0, _MutantFinder(module, source, path))


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:200]


def sweep(simulations: int, seed: int, scenarios: list[str] | None) -> dict[str, Any]:
    import register
    from scenarios.families import FAMILIES
    from scenarios.loader import library_names
    from sim.explore.base import Target
    from sim.explore.swarm import swarm_batch
    from sim.explore.sweep_mutants import SLOW_SCENARIOS

    draws: list[list[Any]] = []
    histories: list[list[Any]] = []
    spent = fired = 0
    for scenario in scenarios or library_names():
        budget = max(1, simulations // 10) if scenario in SLOW_SCENARIOS else simulations
        number = 0
        try:
            for draw in swarm_batch(Target(scenario, "head", {}, tuple(FAMILIES)), budget, seed):
                number = draw.number
                spent += 1
                result = draw.result
                under = any(result.faults_fired.values())
                fired += under
                histories.append([scenario, draw.number, result.digest[:16]])
                if result.violations:
                    found = register.unexplained(result.history, result.verdicts)
                    draws.append([scenario, draw.number, under, list(result.violations), list(found)])
        except Exception as error:  # the runtime raised out of the world: the mutant crashes the harness
            return {"crashed": f"{scenario} draw {number + 1}: {_describe(error)}", "draws": draws}
    return {"crashed": None, "draws": draws, "histories": histories, "simulations": spent, "fired": fired}


class _FirstFailure:
    def __init__(self) -> None:
        self.nodeid: str | None = None

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed and self.nodeid is None:
            self.nodeid = report.nodeid

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed and self.nodeid is None:
            self.nodeid = f"{report.nodeid} (collection)"


def unit_tests(paths: list[str]) -> tuple[int, str | None]:
    import pytest

    first = _FirstFailure()
    args = [*paths, "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", "-W", "ignore"]
    rc = int(pytest.main(args, plugins=[first]))
    return rc, (first.nodeid if rc != 0 else None) or (None if rc == 0 else f"pytest exit {rc}")


def judge(spec: dict[str, Any], root: Path) -> dict[str, Any]:
    if spec.get("module"):
        install(spec["module"], spec["source"], root)
        try:
            importlib.import_module(spec["module"])
        except Exception as error:
            return {"crashed": f"import {spec['module']}: {_describe(error)}"}
    started = time.process_time()
    out = sweep(int(spec["simulations"]), int(spec["seed"]), spec.get("scenarios"))
    out["sweep_s"] = round(time.process_time() - started, 3)
    if out["crashed"] is not None or not spec.get("tests"):
        return out
    started = time.process_time()
    rc, failed = unit_tests(list(spec["tests"]))
    out.update(tests_rc=rc, tests_failed=failed, tests_s=round(time.process_time() - started, 3))
    return out


def main(argv: list[str]) -> int:
    import warnings

    warnings.simplefilter("ignore", SyntaxWarning)
    source, target = Path(argv[0]), Path(argv[1])
    spec = json.loads(source.read_text(encoding="utf-8"))
    root = Path(__file__).resolve().parents[2]
    result = judge(spec, root)
    result["cpu_s"] = round(time.process_time(), 3)
    target.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
