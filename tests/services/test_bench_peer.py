"""`souk bench peer` runs end to end: boardgame.io 0.50.2 (npm ci into the cache the first time) and `souk bench
http`, interleaved (short runs: the long ones are run by hand, see docs/performance.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from services.bench.peer import DEFAULT_CACHE
from services.cli.bench import peer as bench


def beside_the_peer(module: str, *args: str) -> dict:
    """``python -m module --cache ... --json *args`` (a bench run beside boardgame.io), its JSON; skips the test where
    node and npm are not installed or the npm registry does not answer."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: boardgame.io cannot run")
    out = subprocess.run([sys.executable, "-m", module, *args, "--cache", str(DEFAULT_CACHE), "--json"],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0 and "npm ci" in out.stderr and "failed" in out.stderr:
        pytest.skip(f"the npm registry did not answer: {out.stderr[-300:]}")
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout)


def test_one_match_a_side_gives_moves_commands_latencies_and_the_server_cpu_of_both():
    result = beside_the_peer("services.cli.bench.peer", "--matches", "1", "--seconds", "2", "--warmup", "0.5",
                             "--rounds", "1")
    [row] = result["table"]
    assert row["matches"] == 1 and row["stalls"] == 0 and row["peer_refused"] == 0
    # both sides played (how much depends on the machine's load: at load average 20, Souk did 5 commands in 2 s)
    assert row["peer_moves_per_s"] > 0 and row["souk_commands_per_s"] > 0
    assert row["ratio"] == pytest.approx(row["souk_commands_per_s"] / row["peer_moves_per_s"], abs=0.01)
    assert 0 < row["peer_p50_ms"] <= row["peer_p99_ms"] < 5000
    assert 0 < row["souk_p50_ms"] <= row["souk_p99_ms"] < 5000
    # /proc counts CPU in 10 ms ticks: a 2-second run of a few dozen moves on a loaded machine may show none
    assert row["peer_server_cpu_us_per_move"] >= 0 and result["runs"][0]["server_cpu_cores"] < 1.5
    # every Souk process's CPU, both redis-servers too, adds up to the server's
    processes = row["souk_cpu_us_per_command"]
    assert set(processes) == {"gateway", "engine", "projector", "redis_events", "redis_views"}
    assert sum(processes.values()) > 0, processes
    assert row["souk_server_cpu_us_per_command"] == pytest.approx(sum(processes.values()), abs=3)
    assert result["runs"][0]["refused"] == 0, result["runs"][0]["refused_first"]  # boardgame.io refused no move
    # interleaved: the peer, then Souk
    assert [r["side"] for r in result["runs"]] == ["peer", "souk"]
    assert result["runs"][1]["bench_http"].startswith("souk bench http --mode play --target split")
    # Souk's seats send their commands on their sockets, as the peer's send their moves, and it says so
    assert result["runs"][1]["bench_http"].endswith("--send ws") and result["runs"][1]["send"] == "ws"
    assert result["souk_send"] == "ws" and "--send ws" in result["souk"] and "--souk-send ws" in result["command"]
    assert "--game samarkand" in result["runs"][1]["bench_http"]  # fsync always: the default, not named
    assert "--fsync" not in result["runs"][1]["bench_http"]
    assert result["runs"][1]["event_store_appendfsync"] == "always"  # CONFIG GET on the running event store
    assert result["runs"][1]["redis_calls_per_command"]["redis_events"]["xadd"] > 0


def test_the_matches_are_a_list_of_counts():
    refused = CliRunner().invoke(bench.command, ["--matches", "1,0"])
    assert refused.exit_code == 2 and "--matches" in refused.output
    refused = CliRunner().invoke(bench.command, ["--matches", "one"])
    assert refused.exit_code == 2 and "comma-separated" in refused.output
    result = CliRunner().invoke(bench.command, ["--help"], terminal_width=200)
    assert result.exit_code == 0 and "boardgame.io 0.50.2" in result.output and "[default: 1,16,64]" in result.output


def test_the_clients_figures_reach_python_whole_when_they_are_longer_than_a_pipes_buffer():
    """A 64-match run's latencies are a line of megabytes: exiting right after write() cut it at 128 KiB and the
    bench said that the clients printed no figures."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    from importlib import resources

    output = resources.files("services.bench") / "peer_js" / "output.mjs"
    script = f"import({json.dumps(str(output))}).then(m => m.printAndExit({{latencies: Array(200000).fill(0.001234)}}))"
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["latencies"] == [0.001234] * 200000


def test_a_cache_folder_that_cannot_be_written_is_one_clear_error(tmp_path):
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = CliRunner().invoke(bench.command, ["--cache", str(blocker / "peer"), "--matches", "1"])
    assert result.exit_code == 1 and "cannot write boardgame.io's cache folder" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
