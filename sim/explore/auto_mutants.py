"""Automatic mutants of the runtime: every mutation cosmic-ray's operators make to ``model/*.py``.

The project's code mutants (:mod:`sim.explore.code_mutants`) are hand-written, so they hold the
bugs somebody thought of. These are generated: cosmic-ray's core operators (comparison, binary and
unary operator replacement, ``not`` added or dropped, ``True``/``False`` swapped, ``and``/``or``
swapped, ``break``/``continue`` swapped, a raised exception type replaced, a number replaced, a
decorator removed, a ``for`` loop made to run zero times) applied one occurrence at a time to each
module of the runtime. The operators that take arguments (cosmic-ray's variable replacer and
inserter) draw from the global ``random`` and are left out, so a mutant is a pure function of
(module, operator, occurrence).

A mutant is *equivalent*, and is dropped with the reason, when the mutated module compiles to the
same thing as the original: the same abstract syntax tree once annotations (never evaluated here:
every runtime module has ``from __future__ import annotations``) and docstrings are set aside, or
the same bytecode. A mutant whose module does not compile is *crashing*; so is one that cannot be
imported or whose runtime raises a Python error out of a simulation (found by the worker,
:mod:`sim.explore.auto_worker`).

Modules left out, with the reason, are :data:`LEFT_OUT`. Sampling is one ``random.Random(seed)``
shuffle of the sorted mutation list, so a sample is a function of the seed and the tree.

Knows the model's source files and cosmic-ray; never imports the model.
"""

from __future__ import annotations

import ast
import difflib
import random
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "model"

LEFT_OUT: Mapping[str, str] = {
    "__init__.py": "the package's docstring only",
    "errors.py": "leaselab's bad-input error class and its one-line messages, not the runtime",
    "frozen.py": "a faster __init__ for frozen dataclasses: speed, not behaviour",
    "policy.py": "the presets and flags: every flag flip is a flag mutant of `leaselab mutants` already",
}
"""Modules of ``model/`` that are not mutated, with the reason."""


@dataclass(frozen=True)
class MutationSite:
    """One mutation cosmic-ray can make: an operator at one occurrence in one module."""

    module: str
    """The file's name in ``model/`` (``hooks.py``)."""
    operator: str
    """cosmic-ray's operator name (``core/ReplaceComparisonOperator_Is_IsNot``)."""
    occurrence: int
    line: int

    @property
    def name(self) -> str:
        return f"{self.module}:{self.line}:{self.operator.split('/')[-1]}#{self.occurrence}"


@dataclass(frozen=True)
class AutoMutant:
    site: MutationSite
    source: str
    """The whole mutated module."""
    diff: str
    """The unified diff against the original, only the changed lines and one line of context."""

    @property
    def name(self) -> str:
        return self.site.name

    @property
    def module_name(self) -> str:
        return "model." + self.site.module.removesuffix(".py")

    def document(self) -> dict[str, object]:
        return {
            "mutant": self.name,
            "file": f"model/{self.site.module}",
            "line": self.site.line,
            "operator": self.site.operator,
            "occurrence": self.site.occurrence,
            "diff": self.diff,
        }


def _operators() -> list[tuple[str, Any]]:
    import cosmic_ray.plugins

    found = []
    for name in sorted(cosmic_ray.plugins.operator_names()):
        cls = cosmic_ray.plugins.get_operator(name)
        if cls.arguments():
            continue
        found.append((name, cls()))
    return found


def module_files() -> tuple[str, ...]:
    """The runtime's modules to mutate, sorted."""
    return tuple(sorted(p.name for p in MODEL_DIR.glob("*.py") if p.name not in LEFT_OUT))


@cache
def sites(root: Path = ROOT) -> tuple[MutationSite, ...]:
    """Every mutation of every module, in a fixed order (module, operator, occurrence)."""
    from cosmic_ray.ast import ast_nodes, get_ast

    found: list[MutationSite] = []
    operators = _operators()
    for module in module_files():
        tree = get_ast((root / "model" / module).read_text(encoding="utf-8"))
        nodes = list(ast_nodes(tree))
        for name, operator in operators:
            occurrence = 0
            for node in nodes:
                for start, _end in operator.mutation_positions(node):
                    found.append(MutationSite(module, name, occurrence, start[0]))
                    occurrence += 1
    return tuple(found)


def mutate(site: MutationSite, root: Path = ROOT) -> AutoMutant | None:
    """The mutant of ``site``; None when cosmic-ray makes no change there."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    original = (root / "model" / site.module).read_text(encoding="utf-8")
    operator = cosmic_ray.plugins.get_operator(site.operator)()
    source = mutate_code(original, operator, site.occurrence)
    if source is None or source == original:
        return None
    return AutoMutant(site, source, unified_diff(original, source, f"model/{site.module}"))


def unified_diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=f"a/{path}", tofile=f"b/{path}", lineterm="", n=1
    )
    return "\n".join(lines)


# ---- equivalence ----------------------------------------------------------------------------------


class _Strip(ast.NodeTransformer):
    """Drops what never runs here: annotations (postponed, never evaluated) and docstrings."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def _function(self, node: Any) -> Any:
        node.returns = None
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        node.annotation = ast.Constant(None)
        self.generic_visit(node)
        return node


def _drop_docstring(node: Any) -> None:
    body = node.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        node.body = body[1:] or [ast.Pass()]


def _postponed(tree: ast.Module) -> bool:
    return any(
        isinstance(stmt, ast.ImportFrom)
        and stmt.module == "__future__"
        and any(a.name == "annotations" for a in stmt.names)
        for stmt in tree.body
    )


def normal_form(source: str) -> str:
    """The module's syntax tree without annotations (when postponed) and docstrings, as text."""
    tree = ast.parse(source)
    if _postponed(tree):
        tree = _Strip().visit(tree)
        _drop_docstring(tree)
    return ast.dump(tree, include_attributes=False)


def _code_shape(code: types.CodeType) -> tuple[object, ...]:
    consts = tuple(
        _code_shape(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts
    )
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)


def equivalence(original: str, mutated: str, filename: str = "<mutant>") -> str | None:
    """Why ``mutated`` is equivalent to ``original`` (None when it is not); raises SyntaxError when
    the mutant does not compile."""
    compiled = compile(mutated, filename, "exec")
    if normal_form(original) == normal_form(mutated):
        return "the same syntax tree once annotations (never evaluated) and docstrings are set aside"
    if _code_shape(compile(original, filename, "exec")) == _code_shape(compiled):
        return "the same bytecode"
    return None


# ---- sampling -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dropped:
    """A mutant dropped before judging: equivalent or crashing, with the reason."""

    mutant: AutoMutant
    kind: str
    """"equivalent" or "crashing"."""
    reason: str

    def document(self) -> dict[str, object]:
        return {**self.mutant.document(), "kind": self.kind, "reason": self.reason}


def sample(n: int | None, seed: int, root: Path = ROOT) -> tuple[list[AutoMutant], list[Dropped], int]:
    """Up to ``n`` mutants to judge (all when None) drawn by one seeded shuffle of every site, the
    equivalent and non-compiling ones met on the way (dropped with the reason), and the number of sites."""
    every = sites(root)
    order = list(range(len(every)))
    random.Random(seed).shuffle(order)
    originals = {m: (root / "model" / m).read_text(encoding="utf-8") for m in module_files()}
    kept: list[AutoMutant] = []
    dropped: list[Dropped] = []
    for index in order:
        if n is not None and len(kept) >= n:
            break
        mutant = mutate(every[index], root)
        if mutant is None:
            continue
        try:
            reason = equivalence(originals[mutant.site.module], mutant.source, f"model/{mutant.site.module}")
        except SyntaxError as error:
            dropped.append(Dropped(mutant, "crashing", f"does not compile: {error.msg}"))
            continue
        if reason is not None:
            dropped.append(Dropped(mutant, "equivalent", reason))
        else:
            kept.append(mutant)
    return kept, dropped, len(every)


def by_module(mutants: Sequence[AutoMutant]) -> Iterator[tuple[str, int]]:
    """How many of ``mutants`` fall in each module, sorted by module."""
    counts: dict[str, int] = {}
    for mutant in mutants:
        counts[mutant.site.module] = counts.get(mutant.site.module, 0) + 1
    yield from sorted(counts.items())


__all__ = [
    "LEFT_OUT",
    "AutoMutant",
    "Dropped",
    "MutationSite",
    "by_module",
    "equivalence",
    "module_files",
    "mutate",
    "normal_form",
    "sample",
    "sites",
]
