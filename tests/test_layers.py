"""The import rules of ARCHITECTURE.md ("Layers and folders"), enforced by parsing, never importing.

Every ``.py`` file of the top-level packages is read with :mod:`ast`. The standard library is
recognised with ``sys.stdlib_module_names``; imports inside ``if TYPE_CHECKING:`` count like any
other (a layer must not even know the names of the layers above it).

| package      | may import                                                                   |
|--------------|------------------------------------------------------------------------------|
| ``model``    | the standard library and ``model``; no clock, randomness, I/O or simpy        |
| ``scenarios``| ``model``, ``scenarios``, the standard library, third-party libs except simpy |
| ``sim``      | ``model``, ``scenarios``, ``sim``, the standard library, third-party libs     |
| ``reports``  | ``model``, ``scenarios``, ``reports``, stdlib, third-party libs except simpy  |
| ``leaselab`` | anything                                                                     |

and the package-level import graph has no cycle. Inside ``sim`` each stage has its folder, and
imports go one way, down the pipeline (a stage may import the stages above it, never below):

| stage          | may import (besides ``model``, ``scenarios``, third-party libs)     |
|----------------|----------------------------------------------------------------------|
| ``sim.world``  | nothing else of ``sim`` (the world never knows who searches it)       |
| ``sim.explore``| ``sim.world``                                                         |
| ``sim.sweep``  | ``sim.world``, ``sim.explore``                                        |
| ``sim.review`` | ``sim.world``, ``sim.explore``, ``sim.sweep``                         |
| ``sim.bench``  | every stage                                                          |
| ``sim.conform``| every stage (uses ``sim.world``'s store and sync driver)             |

(``sim._moved``, the old flat paths kept for one release, may be imported by any stage's
``__init__``.) No module lives loose in ``sim/`` beside the stages, and no file of ``sim``,
``model`` or ``reports`` grows past :data:`MAX_LINES` lines unless its docstring says why it
must stay one piece.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("model", "scenarios", "sim", "reports", "leaselab")
STAGES = ("sim.world", "sim.explore", "sim.sweep", "sim.review", "sim.bench", "sim.conform")
"""The stages of ``sim`` in pipeline order: each may import those before it, never those after."""
SIM_SHARED = frozenset({"sim", "sim._moved"})
MAX_LINES = 450
ONE_PIECE = "one piece"
"""The words a long module's docstring uses to say why it is not split."""
FIRST_PARTY = frozenset({*LAYERS, "tests", "benchmarks", "notebooks"})
STDLIB = frozenset(sys.stdlib_module_names)

# Standard-library modules the model must not touch: clocks, randomness, I/O, concurrency,
# dynamic imports. (Plain ``datetime`` is allowed for arithmetic; reading "now" is flagged below.)
MODEL_FORBIDDEN_MODULES = frozenset(
    {
        "random", "secrets", "time", "simpy", "asyncio", "socket", "socketserver", "ssl", "select",
        "selectors", "subprocess", "os", "io", "pathlib", "shutil", "tempfile", "glob", "fileinput",
        "sqlite3", "logging", "threading", "multiprocessing", "concurrent", "signal", "urllib", "http",
        "importlib",
    }
)  # fmt: skip
MODEL_FORBIDDEN_BUILTINS = frozenset({"open", "print", "input", "breakpoint", "__import__"})
# <clock>.<reader>(...) calls that read the wall clock.
CLOCK_READERS = {
    "datetime": frozenset({"now", "utcnow", "today"}),
    "date": frozenset({"today"}),
    "time": frozenset({"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"}),
}


@dataclass(frozen=True, slots=True)
class Import:
    """One import (or literal dynamic import) found in a file."""

    path: str  # relative to the repository root, with forward slashes
    line: int
    module: str  # absolute dotted name; relative imports resolved

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


# ---- parsing -----------------------------------------------------------------------------------


def package_files(package: str) -> list[Path]:
    base = ROOT / package
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _package_of(rel_path: str) -> list[str]:
    parts = rel_path.removesuffix(".py").split("/")
    return parts[:-1]  # the package containing the module (for __init__.py: the package itself)


def _resolve_relative(rel_path: str, level: int, module: str | None) -> str:
    package = _package_of(rel_path)
    base = package[: len(package) - (level - 1)] if level - 1 < len(package) else package[:1]
    return ".".join([*base, module] if module else base)


def _literal_dynamic_import(node: ast.Call) -> str | None:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_in(tree: ast.Module, rel_path: str) -> list[Import]:
    """Every import of a parsed file, relative imports resolved against ``rel_path``."""
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(rel_path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append(Import(rel_path, node.lineno, _resolve_relative(rel_path, node.level, node.module)))
            elif node.module:
                found.append(Import(rel_path, node.lineno, node.module))
        elif isinstance(node, ast.Call) and (target := _literal_dynamic_import(node)):
            found.append(Import(rel_path, node.lineno, target))
    return sorted(found, key=lambda i: i.line)


def imports_of(package: str) -> list[Import]:
    return [imp for path in package_files(package) for imp in imports_in(parse(path), relative(path))]


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def clock_reads_in(tree: ast.Module, rel_path: str) -> list[Finding]:
    """Calls such as ``datetime.now()``, ``datetime.datetime.utcnow()``, ``date.today()``, ``time.time()``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = _dotted(node.func.value).rsplit(".", 1)[-1]
            if node.func.attr in CLOCK_READERS.get(owner, ()):
                found.append(Finding(rel_path, node.lineno, f"reads the clock: {_dotted(node.func)}()"))
    return found


def builtin_calls_in(tree: ast.Module, rel_path: str, names: frozenset[str]) -> list[Finding]:
    return [
        Finding(rel_path, node.lineno, f"calls the builtin {node.func.id}()")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
    ]


# ---- rules -------------------------------------------------------------------------------------


def layer_violations(
    imports: Iterable[Import], *, first_party: frozenset[str], stdlib_only: bool, banned: frozenset[str]
) -> list[str]:
    """The imports a layer may not make, as ``file:line: imports X (why)``."""
    bad = []
    for imp in imports:
        if imp.top in banned:
            why = "banned in this layer"
        elif imp.top in FIRST_PARTY:
            if imp.top in first_party:
                continue
            why = f"first-party package outside {sorted(first_party)}"
        elif imp.top in STDLIB:
            continue
        elif stdlib_only:
            why = "not in the standard library"
        else:
            continue
        bad.append(f"{imp.where()}: imports {imp.module} ({why})")
    return bad


def _report(rule: str, offenders: list[str]) -> str:
    return f"{rule}; {len(offenders)} offending import(s) or call(s):\n  " + "\n  ".join(offenders)


def package_graph(imports: Iterable[Import]) -> dict[tuple[str, str], Import]:
    """Edges (importer package, imported package) between distinct layers, each with one witness."""
    edges: dict[tuple[str, str], Import] = {}
    for imp in imports:
        source = imp.path.split("/")[0]
        if imp.top in LAYERS and imp.top != source:
            edges.setdefault((source, imp.top), imp)
    return edges


def find_cycle(edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """One cycle of the directed graph as [a, b, ..., a], or None when it is acyclic."""
    successors: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        successors.setdefault(a, []).append(b)
    state: dict[str, str] = {}  # "open" while on the DFS stack, "done" after

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in successors.get(node, []):
            if state.get(nxt) == "open":
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt, stack)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for start in sorted(successors):
        if start not in state and (cycle := visit(start, [])):
            return cycle
    return None


def stage_of(module: str) -> str | None:
    """The stage a dotted module name belongs to (``sim.world.kernel`` -> ``sim.world``), if any."""
    return next((stage for stage in STAGES if module == stage or module.startswith(stage + ".")), None)


def stage_violations(imports: Iterable[Import]) -> list[str]:
    """Imports of ``sim`` modules that break the one-way order of :data:`STAGES`."""
    bad = []
    for imp in imports:
        source = stage_of(imp.path.removesuffix(".py").replace("/", "."))
        if source is None or imp.top != "sim" or imp.module in SIM_SHARED:
            continue
        target = stage_of(imp.module)
        if target is None:
            bad.append(f"{imp.where()}: imports {imp.module} (not inside a stage)")
        elif STAGES.index(target) > STAGES.index(source):
            bad.append(f"{imp.where()}: imports {imp.module} ({source} may not import {target}, a later stage)")
    return bad


def all_imports() -> Iterator[Import]:
    for package in LAYERS:
        yield from imports_of(package)


# ---- the rules as tests ------------------------------------------------------------------------


def test_model_imports_only_the_standard_library_and_model() -> None:
    offenders = layer_violations(
        imports_of("model"), first_party=frozenset({"model"}), stdlib_only=True, banned=frozenset()
    )
    assert not offenders, _report("model/ may import only the standard library and model", offenders)


def test_model_never_imports_clocks_randomness_io_or_simpy() -> None:
    offenders = [
        f"{imp.where()}: imports {imp.module}" for imp in imports_of("model") if imp.top in MODEL_FORBIDDEN_MODULES
    ]
    assert not offenders, _report(
        f"model/ is sans-IO and deterministic: never {sorted(MODEL_FORBIDDEN_MODULES)}", offenders
    )


def test_model_never_reads_the_wall_clock() -> None:
    offenders = [str(f) for p in package_files("model") for f in clock_reads_in(parse(p), relative(p))]
    assert not offenders, _report("model/ never reads a clock: time comes from a ReadClock request", offenders)


def test_model_never_calls_io_builtins() -> None:
    offenders = [
        str(f)
        for p in package_files("model")
        for f in builtin_calls_in(parse(p), relative(p), MODEL_FORBIDDEN_BUILTINS)
    ]
    assert not offenders, _report(f"model/ performs no I/O: never {sorted(MODEL_FORBIDDEN_BUILTINS)}", offenders)


def test_scenarios_imports_only_model_and_scenarios_and_never_simpy() -> None:
    offenders = layer_violations(
        imports_of("scenarios"),
        first_party=frozenset({"model", "scenarios"}),
        stdlib_only=False,
        banned=frozenset({"simpy"}),
    )
    assert not offenders, _report("scenarios/ may import model and scenarios (never sim, reports, simpy)", offenders)


def test_sim_imports_only_model_scenarios_and_sim() -> None:
    offenders = layer_violations(
        imports_of("sim"), first_party=frozenset({"model", "scenarios", "sim"}), stdlib_only=False, banned=frozenset()
    )
    assert not offenders, _report("sim/ may import model, scenarios and sim (never reports, leaselab)", offenders)


def test_sim_stages_import_one_way_down_the_pipeline() -> None:
    offenders = stage_violations(imports_of("sim"))
    assert not offenders, _report("a sim stage may import only the stages before it: " + " -> ".join(STAGES), offenders)


def test_every_sim_module_lives_in_a_stage_folder() -> None:
    loose = [
        relative(path)
        for path in package_files("sim")
        if stage_of(relative(path).removesuffix(".py").replace("/", ".")) is None
        and relative(path) not in ("sim/__init__.py", "sim/_moved.py")
    ]
    assert not loose, f"modules loose in sim/ (give each a stage folder, see sim/__init__.py): {loose}"


def test_no_module_grows_past_the_size_of_one_reading() -> None:
    long = [
        f"{relative(path)}: {lines} lines"
        for package in ("sim", "model", "reports")
        for path in package_files(package)
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and ONE_PIECE not in (ast.get_docstring(parse(path)) or "")
    ]
    assert not long, f"split these (or say in the docstring why each is {ONE_PIECE!r}): {long}"


OLD_PATH_USERS = frozenset({"tests/sim/test_moved_modules.py", "benchmarks/ab_world.py"})
"""Files that name an old path on purpose: the test of the old paths, and the A/B script, which
also times checkouts from before the move."""


def test_nothing_first_party_imports_a_moved_module_path() -> None:
    from sim._moved import MOVED_MODULES

    offenders = [
        f"{imp.where()}: imports {imp.module} (now {MOVED_MODULES[imp.module]})"
        for package in (*LAYERS, "tests", "benchmarks")
        for imp in imports_of(package)
        if imp.module in MOVED_MODULES and imp.path not in OLD_PATH_USERS
    ]
    assert not offenders, _report("old module paths are for users only, for one release", offenders)


def test_reports_imports_only_model_scenarios_and_reports_and_never_simpy() -> None:
    offenders = layer_violations(
        imports_of("reports"),
        first_party=frozenset({"model", "scenarios", "reports"}),
        stdlib_only=False,
        banned=frozenset({"simpy"}),
    )
    assert not offenders, _report("reports/ may import model, scenarios and reports (never sim, simpy)", offenders)


def test_no_package_imports_the_tests_benchmarks_or_notebooks() -> None:
    offenders = [
        f"{imp.where()}: imports {imp.module}"
        for imp in all_imports()
        if imp.top in {"tests", "benchmarks", "notebooks"}
    ]
    assert not offenders, _report("shipped packages never import tests, benchmarks or notebooks", offenders)


def test_the_package_import_graph_has_no_cycle() -> None:
    edges = package_graph(all_imports())
    cycle = find_cycle(edges)
    if cycle is not None:
        witnesses = [f"{a} -> {b} at {edges[(a, b)].where()}" for a, b in itertools.pairwise(cycle)]
        raise AssertionError(_report("import cycle between packages " + " -> ".join(cycle), witnesses))


# ---- the checker itself (a rule that can never fire is a bug) ------------------------------------


def _imports(source: str, rel_path: str = "model/x.py") -> list[Import]:
    return imports_in(ast.parse(source), rel_path)


def test_the_checker_sees_the_real_model_package() -> None:
    modules = {imp.module for imp in imports_of("model")}
    assert "model.vocab" in modules


def test_the_checker_resolves_relative_imports_to_their_package() -> None:
    found = _imports("from . import vocab\nfrom .records import RunRow\nfrom .. import x\n", "sim/world/a.py")
    assert [i.module for i in found] == ["sim.world", "sim.world.records", "sim"]


def test_the_checker_counts_literal_dynamic_imports() -> None:
    found = _imports("import importlib\nimportlib.import_module('simpy')\n__import__('random')\n")
    assert [i.top for i in found] == ["importlib", "simpy", "random"]


def test_the_checker_flags_a_third_party_import_in_model() -> None:
    bad = layer_violations(
        _imports("import simpy\nimport dataclasses\nfrom model.vocab import RunStatus\n"),
        first_party=frozenset({"model"}),
        stdlib_only=True,
        banned=frozenset(),
    )
    assert bad == ["model/x.py:1: imports simpy (not in the standard library)"]


def test_the_checker_flags_an_upward_first_party_import() -> None:
    bad = layer_violations(
        _imports("import pandas\nfrom sim.world import World\n", "reports/a.py"),
        first_party=frozenset({"model", "scenarios", "reports"}),
        stdlib_only=False,
        banned=frozenset({"simpy"}),
    )
    assert bad == ["reports/a.py:2: imports sim.world (first-party package outside ['model', 'reports', 'scenarios'])"]


def test_the_checker_flags_clock_reads_but_not_a_method_named_now() -> None:
    source = (
        "import datetime\nfrom datetime import date\na = datetime.datetime.now()\nb = date.today()\nc = clock.now()\n"
    )
    assert [f.line for f in clock_reads_in(ast.parse(source), "model/x.py")] == [3, 4]


def test_the_checker_flags_io_builtins() -> None:
    source = "with open('f') as fh:\n    print(fh)\nlen('x')\n"
    found = builtin_calls_in(ast.parse(source), "model/x.py", MODEL_FORBIDDEN_BUILTINS)
    assert [str(f) for f in found] == [
        "model/x.py:1: calls the builtin open()",
        "model/x.py:2: calls the builtin print()",
    ]


def test_the_stage_checker_flags_an_import_of_a_later_stage_and_accepts_an_earlier_one() -> None:
    source = (
        "from sim.world.simulate import simulate\n"
        "from sim.sweep.engine import run_sweep\n"
        "from sim._moved import old_names\n"
        "import sim.flat\n"
    )
    bad = stage_violations(_imports(source, "sim/explore/a.py"))
    assert bad == [
        "sim/explore/a.py:2: imports sim.sweep.engine (sim.explore may not import sim.sweep, a later stage)",
        "sim/explore/a.py:4: imports sim.flat (not inside a stage)",
    ]
    assert stage_violations(_imports(source, "sim/bench/a.py")) == [
        "sim/bench/a.py:4: imports sim.flat (not inside a stage)"
    ]


def test_the_cycle_finder_reports_a_cycle_and_accepts_a_dag() -> None:
    assert find_cycle([("leaselab", "sim"), ("sim", "model"), ("reports", "model")]) is None
    assert find_cycle([("model", "sim"), ("sim", "scenarios"), ("scenarios", "model")]) == [
        "model",
        "sim",
        "scenarios",
        "model",
    ]
