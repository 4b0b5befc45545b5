"""Scenarios faithful to head's configuration rules, and the fault ranges of real deployments.

At head every MCP tool is a non_idempotent_write (spec 6, McpTool.php) and an MCP server requires
approval unless configured otherwise: the schema refuses a remote tool declared anything else
(one line naming the file and field, exit 2) and a remote tool that turns approval off without
saying why. Clock skew may reach an hour either way and store commit delays two lease lengths.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from model.constants import LEASE_S
from model.errors import LeaselabError
from scenarios.families import MAX_SKEW_S, MAX_STORE_DELAY_S
from scenarios.loader import LIBRARY_DIR, library_names, load_scenario

runner = CliRunner()
RUNS = '[[runs]]\nscript = [["t"], []]\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text('name = "x"\n' + text, encoding="utf-8")
    return path


@pytest.mark.parametrize("effect", ["undeclared", "read_only", "idempotent_write"])
def test_a_remote_tool_declared_other_than_non_idempotent_is_refused_in_one_line(tmp_path: Path, effect: str) -> None:
    path = write(tmp_path, f'[[tools]]\nname = "t"\neffect = "{effect}"\nremote = true\n' + RUNS)
    with pytest.raises(LeaselabError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    assert caught.value.field == "tools.0.effect" and "non_idempotent_write" in message
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_remote_non_idempotent_tool_with_approval_on_loads(tmp_path: Path) -> None:
    path = write(tmp_path, '[[tools]]\nname = "t"\neffect = "non_idempotent_write"\nremote = true\n' + RUNS)
    assert load_scenario(path).tools[0].server_requires_approval is True


def test_turning_mcp_approval_off_needs_a_reason(tmp_path: Path) -> None:
    tool = '[[tools]]\nname = "t"\neffect = "non_idempotent_write"\nremote = true\nserver_requires_approval = false\n'
    with pytest.raises(LeaselabError) as caught:
        load_scenario(write(tmp_path, tool + RUNS))
    assert "approval_off_reason" in str(caught.value)
    reasoned = tool + 'approval_off_reason = "the write must run on the first pass"\n'
    assert load_scenario(write(tmp_path, reasoned + RUNS)).tools[0].approval_off_reason


@pytest.mark.parametrize("name", library_names())
def test_every_library_scenario_that_turns_approval_off_says_why_in_its_file(name: str) -> None:
    data = tomllib.loads((LIBRARY_DIR / f"{name}.toml").read_text(encoding="utf-8"))
    for tool in data.get("tools", []):
        if tool.get("remote"):
            assert tool.get("effect") == "non_idempotent_write", (name, tool["name"])
        if tool.get("remote") and tool.get("server_requires_approval") is False:
            assert len(str(tool.get("approval_off_reason", "")).split()) >= 8, (name, tool["name"])


def test_clock_skew_may_reach_an_hour_either_way_and_no_further(tmp_path: Path) -> None:
    assert MAX_SKEW_S == 3600.0
    ok = load_scenario(write(tmp_path, RUNS.replace('["t"], ', "") + "[faults.clock_skew]\nmax_skew_s = 3600.0\n"))
    assert ok.faults.clock_skew.max_skew_s == MAX_SKEW_S
    with pytest.raises(LeaselabError) as caught:
        load_scenario(write(tmp_path, RUNS.replace('["t"], ', "") + "[faults.clock_skew]\nmax_skew_s = 3601.0\n"))
    assert caught.value.field == "faults.clock_skew.max_skew_s"


def test_store_delays_may_reach_twice_the_lease_and_no_further(tmp_path: Path) -> None:
    assert MAX_STORE_DELAY_S == 2 * LEASE_S
    runs = RUNS.replace('["t"], ', "")
    ok = load_scenario(write(tmp_path, runs + f"[faults.store]\nslow_s = [1.0, {MAX_STORE_DELAY_S}]\n"))
    assert ok.faults.store.slow_s[1] == MAX_STORE_DELAY_S
    with pytest.raises(LeaselabError):
        load_scenario(write(tmp_path, runs + f"[faults.store]\nslow_s = [1.0, {MAX_STORE_DELAY_S + 1}]\n"))


def test_a_scenario_widened_to_deployment_ranges_keeps_its_probabilities() -> None:
    base = load_scenario("default")
    wide = base.at_deployment_ranges()
    assert wide.faults.clock_skew.max_skew_s == MAX_SKEW_S
    assert wide.faults.store.slow_s == (1.0, MAX_STORE_DELAY_S)
    assert wide.faults.clock_skew.probability == base.faults.clock_skew.probability
    assert wide.faults.store.probability == base.faults.store.probability
