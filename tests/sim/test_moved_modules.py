"""The old flat module paths of ``sim`` still import for one release, with a DeprecationWarning.

Each check runs in a fresh interpreter: an import that already happened in this process would
not go through the finder again, and would pass without showing anything.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from sim._moved import MOVED_MODULES


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_an_old_module_path_is_the_new_module_and_warns_where_it_went() -> None:
    done = _python(
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import sim.simulate as old\n"
        "import sim.world.simulate as new\n"
        "assert old is new, (old, new)\n"
        "assert old.__spec__.name == 'sim.world.simulate', old.__spec__\n"
        "print([str(w.message) for w in caught if w.category is DeprecationWarning])\n"
    )
    assert done.returncode == 0, done.stderr
    assert "sim.simulate moved to sim.world.simulate" in done.stdout


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_old_path_imports_and_is_refused_under_warnings_as_errors(old: str) -> None:
    assert _python(f"import {old}").returncode == 0
    strict = _python(f"import warnings; warnings.simplefilter('error', DeprecationWarning); import {old}")
    assert strict.returncode != 0 and "DeprecationWarning" in strict.stderr


@pytest.mark.parametrize(
    ("package", "name", "home"),
    [
        ("sim.world", "World", "sim.world.interpreter"),
        ("sim.world", "outcome_value", "sim.world.outcomes"),
        ("sim.sweep", "run_sweep", "sim.sweep.engine"),
        ("sim.review", "run_review", "sim.review.review"),
        ("sim.bench", "world_bench", "sim.bench.world"),
    ],
)
def test_an_old_module_that_is_a_package_now_still_hands_out_its_names(package: str, name: str, home: str) -> None:
    done = _python(
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    value = getattr(importlib.import_module({package!r}), {name!r})\n"
        f"assert value is getattr(importlib.import_module({home!r}), {name!r})\n"
        "print([str(w.message) for w in caught])\n"
    )
    assert done.returncode == 0, done.stderr
    assert f"{package}.{name} moved to {home}.{name}" in done.stdout


def test_a_name_the_old_module_never_had_is_an_attribute_error() -> None:
    import sim.world

    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        sim.world.nonexistent  # noqa: B018
