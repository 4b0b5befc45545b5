"""The Python API as a notebook user meets it: a short repr, paths as ``str``, seeds checked, an empty
folder refused by ``load``, ``__version__`` and ``--version``, ``dir(leaselab)`` the public names only,
and a docstring on every export this package owns."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from typer.testing import CliRunner

import leaselab
from leaselab.cli import app
from model.errors import LeaselabError

ROOT = Path(__file__).resolve().parents[2]
F01 = ROOT / "register" / "entries" / "F-01-completed-write-rerun.toml"


def test_the_repr_of_a_result_is_one_short_line() -> None:
    result = leaselab.simulate("default", "head", seed=7)
    text = repr(result)
    assert len(text) < 400 and "\n" not in text
    assert result.digest in text and "seed 7" in text and "default" in text
    assert all(name in text for name in result.violations)


def test_counterexample_files_read_and_write_from_str_paths(tmp_path: Path) -> None:
    cx = leaselab.read_counterexample(str(F01))
    assert cx == leaselab.read_counterexample(F01)
    written = leaselab.write_counterexample(cx, str(tmp_path / "sub" / "copy.toml"))
    assert written == tmp_path / "sub" / "copy.toml"
    assert leaselab.read_counterexample(str(written)) == cx


@pytest.mark.parametrize("seed", ["3", -1, 2**63, 1.0, True, None])
def test_a_seed_that_is_not_an_integer_from_0_to_2_63_minus_1_is_refused(seed: object) -> None:
    with pytest.raises(LeaselabError) as error:
        leaselab.simulate("happy_path", "head", seed=seed)  # type: ignore[arg-type]
    assert error.value.field == "seed"


def test_load_of_a_folder_without_shards_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(LeaselabError) as error:
        leaselab.load(tmp_path)
    assert str(tmp_path) in str(error.value) and "no shard" in str(error.value)


def test_the_version_is_the_installed_packages_and_the_cli_prints_it() -> None:
    from importlib.metadata import version

    assert leaselab.__version__ == version("leaselab")
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"leaselab {leaselab.__version__}\n"


def test_dir_lists_the_public_names_only() -> None:
    assert dir(leaselab) == sorted([*leaselab.__all__, "__version__"])


OWNED_ELSEWHERE = {"Budget", "Counterexample", "ExhaustiveExplorer", "ExploreReport", "HypothesisExplorer"}
"""Exports defined in ``sim/explore/``, whose docstrings are that package's business."""


@pytest.mark.parametrize("name", sorted(set(leaselab.__all__) - OWNED_ELSEWHERE))
def test_every_export_has_a_docstring_of_its_own(name: str) -> None:
    value = getattr(leaselab, name)
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return
    doc = value.__doc__ or ""  # its own: inspect.getdoc would inherit a base class's
    assert doc and not doc.startswith(f"{name}("), f"{name} has no docstring"
