"""``leaselab policies`` and the CLI's error contract, in-process (CliRunner) and as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import leaselab
from leaselab.cli import LeaselabGroup, app, main
from model.errors import LeaselabError
from model.policy import FLAG_DOCS, FLAG_NAMES, HEAD, PRESET_ALIASES, PRESET_DOCS, PRESETS, preset

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leaselab", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def expected_document() -> dict[str, object]:
    return {
        "presets": {name: preset(name).as_dict() for name in [*PRESETS, *PRESET_ALIASES]},
        "flags": {flag: {"doc": FLAG_DOCS[flag], "default": getattr(HEAD, flag)} for flag in FLAG_NAMES},
    }


# ---- policies --json ---------------------------------------------------------------------------


def test_policies_json_has_exactly_the_documented_shape() -> None:
    result = runner.invoke(app, ["policies", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == expected_document()


def test_policies_json_lists_every_preset_and_the_head_alias_with_every_flag() -> None:
    document = json.loads(runner.invoke(app, ["policies", "--json"]).stdout)
    assert list(document["presets"]) == ["adr-104", "adr-111", "adr-112", "adr-122", "adr-141", "head"]
    assert all(list(flags) == list(FLAG_NAMES) for flags in document["presets"].values())
    assert document["presets"]["head"] == document["presets"]["adr-141"]


def test_policies_json_flags_carry_a_doc_string_and_a_boolean_head_default() -> None:
    flags = json.loads(runner.invoke(app, ["policies", "--json"]).stdout)["flags"]
    assert list(flags) == list(FLAG_NAMES)
    assert all(set(entry) == {"doc", "default"} for entry in flags.values())
    assert all(isinstance(e["doc"], str) and isinstance(e["default"], bool) for e in flags.values())


@pytest.mark.slow
def test_policies_json_from_a_real_process_matches_the_in_process_document() -> None:
    done = run_module("policies", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected_document()


# ---- policies (text) ---------------------------------------------------------------------------


def test_policies_text_lists_every_preset_with_its_doc() -> None:
    result = runner.invoke(app, ["policies"])
    assert result.exit_code == 0, result.output
    for name, doc in PRESET_DOCS.items():
        assert name in result.stdout and doc in result.stdout


def test_policies_text_notes_the_head_alias_on_its_preset() -> None:
    line = next(ln for ln in runner.invoke(app, ["policies"]).stdout.splitlines() if PRESET_DOCS["adr-141"] in ln)
    assert "adr-141 = head" in line


def test_policies_text_lists_every_flag_with_its_doc_and_head_default() -> None:
    lines = runner.invoke(app, ["policies"]).stdout.splitlines()
    for flag in FLAG_NAMES:
        line = next(ln for ln in lines if ln.split() and ln.split()[0] == flag)
        assert FLAG_DOCS[flag] in line
        assert line.split()[1] == ("on" if getattr(HEAD, flag) else "off")


def test_policies_text_shows_where_a_preset_differs_from_head() -> None:
    text = " ".join(runner.invoke(app, ["policies"]).stdout.split())
    assert "differs from head: typed_effects=off" in text
    assert "kb9_fence_survives_requeue=on" in text


# ---- the error contract ------------------------------------------------------------------------


def test_an_unknown_command_option_exits_2_with_one_line_and_no_traceback() -> None:
    result = runner.invoke(app, ["policies", "--bogus"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["leaselab: No such option: --bogus (see 'leaselab policies --help')"]
    assert "Traceback" not in result.output


def test_an_unknown_command_exits_2_with_one_line() -> None:
    result = runner.invoke(app, ["frobnicate"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("leaselab: No such command 'frobnicate'")


@pytest.mark.slow
def test_an_unknown_command_option_from_a_real_process_exits_2_with_one_line_and_no_traceback() -> None:
    done = run_module("policies", "--bogus")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["leaselab: No such option: --bogus (see 'leaselab policies --help')"]
    assert "Traceback" not in done.stderr + done.stdout


def test_no_arguments_shows_the_help_listing_the_commands() -> None:
    result = runner.invoke(app, [])
    assert "policies" in result.output
    assert "Traceback" not in result.output


def _app_raising(error: Exception) -> typer.Typer:
    test_app = typer.Typer(cls=LeaselabGroup, add_completion=False)

    @test_app.callback()
    def _root() -> None:
        """A throwaway app using the real group."""

    @test_app.command("boom")
    def _boom() -> None:
        raise error

    return test_app


def test_a_leaselab_error_in_a_command_is_one_line_with_exit_code_2() -> None:
    error = LeaselabError("unknown policy 'x'", field="policy", hint="valid policies: adr-104, head")
    result = runner.invoke(_app_raising(error), ["boom"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["leaselab: policy: unknown policy 'x' (valid policies: adr-104, head)"]
    assert "Traceback" not in result.output


def test_a_harness_bug_in_a_command_is_not_dressed_up_as_bad_input() -> None:
    result = runner.invoke(_app_raising(RuntimeError("bug")), ["boom"])
    assert isinstance(result.exception, RuntimeError)
    assert result.exit_code == 1


def test_main_turns_a_leaselab_error_raised_outside_a_command_into_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken_app(**_: object) -> None:
        raise LeaselabError("scenario.toml: seed: not an integer")

    monkeypatch.setattr("leaselab.cli.app", broken_app)
    with pytest.raises(SystemExit) as exited:
        main(["anything"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == "leaselab: scenario.toml: seed: not an integer\n"


def test_main_exits_0_after_a_successful_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["policies", "--json"])
    assert exited.value.code == 0
    assert json.loads(capsys.readouterr().out) == expected_document()


# ---- the public API ----------------------------------------------------------------------------


def test_the_public_api_exports_the_policy_vocabulary_and_every_listed_name_exists() -> None:
    assert {"PRESETS", "Policy", "preset", "resolve_policy", "simulate", "SwarmExplorer"} <= set(leaselab.__all__)
    assert all(hasattr(leaselab, name) for name in leaselab.__all__)
    assert len(set(leaselab.__all__)) == len(leaselab.__all__)
