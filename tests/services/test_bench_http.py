"""`souk bench http` runs end to end (short runs: the long ones are run by hand, see the README)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from services.bench import http as driver
from services.cli.bench import http as bench


def _run(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "services.cli.bench.http", *args, "--json"], capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_play_mode_plays_games_over_http_and_prints_sane_figures_with_the_cpu_of_each_process():
    figures = _run("--games", "4", "--seconds", "2", "--warmup", "0.3", "--target", "split")
    assert figures["commands"] > 20
    assert figures["commands_per_s"] == pytest.approx(figures["commands"] / 2, rel=0.01)
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"] < 5000
    assert figures["rejected"] == {} and figures["stalls"] == 0 and figures["errors"] == []
    assert figures["clients"] == 16  # every seat a client
    for process in ("engine", "projector", "gateway", "redis_events", "redis_views", "drivers"):
        assert figures["cpu_us_per_command"][process] > 0, process
    assert figures["cpu_cores"]["gateway"] < 2.5
    assert figures["command"].startswith("souk bench http --mode play --target split")
    assert figures["event_store_appendfsync"] == "always"  # the default, as `souk serve` runs
    # each command's view pushed to the seats (every seat's view changes with each command), whole views
    assert figures["pushes_per_command"] >= 1 and figures["bytes_per_push"] > 100
    calls = figures["redis_calls_per_command"]
    assert calls["redis_events"]["xadd"] >= 1 and calls["redis_events"]["(reads)"] >= 1
    # the read store's round trips: the projector's writes and the gateway's presence (views come pushed, not read
    # back, since the push merge: under one a command when the projector batches)
    assert calls["redis_views"]["(reads)"] > 0 and "info" not in calls["redis_events"]


def test_send_ws_plays_with_commands_sent_on_the_seats_sockets_and_says_so():
    """``--send ws``: no command is POSTed (the gateway's access log would show POSTs: none but the setup's); each
    is answered on its seat's socket and its view pushed there."""
    figures = _run("--games", "4", "--seconds", "2", "--warmup", "0.3", "--target", "split", "--send", "ws")
    assert figures["commands"] > 20 and figures["rejected"] == {} and figures["stalls"] == 0
    assert figures["errors"] == [] and figures["send"] == "ws"
    assert figures["command"].endswith("--send ws")
    assert 0 < figures["answer_p50_ms"] <= figures["p99_ms"]
    assert figures["pushes_per_command"] >= 1  # the answers are not counted as pushes
    assert figures["cpu_us_per_command"]["gateway"] > 0


def test_split_with_two_gateway_processes_counts_the_cpu_of_both():
    figures = _run("--games", "4", "--seconds", "2", "--warmup", "0.3", "--target", "split", "--gateways", "2")
    assert figures["commands"] > 20 and figures["errors"] == [] and figures["stalls"] == 0
    # the serving children's CPU, not only their supervisor's (hundreds of µs a command, not a few)
    assert figures["cpu_us_per_command"]["gateway"] > 50
    assert "--target split --gateways 2" in figures["command"]


def test_at_once_every_awaited_seat_sends_on_the_same_view_and_none_is_stale():
    """Istanbul's answers, all seats at once (each with its view's version as expected_version): before the
    engine kept when each seat's decision began, 1.5 of them were refused stale per accepted command."""
    figures = _run("--game", "istanbul", "--seats", "4", "--games", "2", "--seconds", "2", "--warmup", "0.3",
                   "--at-once")
    assert figures["at_once"] is True and figures["commands"] > 10 and figures["errors"] == []
    assert figures["rejected"] == {} and figures["stale_per_command"] == 0.0, figures
    assert figures["command"].endswith("--at-once")


def test_the_fanout_mode_times_every_sockets_push_and_each_socket_gets_only_its_audiences_view():
    figures = _run("--mode", "fanout", "--sockets", "30", "--seconds", "2", "--warmup", "0.3", "--drivers", "2",
                   "--rate", "20")
    assert figures["commands"] >= 10
    # every socket gets every view that a measured command made (a socket may skip a view only when it lags)
    assert figures["pushes"] >= 0.9 * figures["commands"] * 30
    assert 0 < figures["push_p50_ms"] <= figures["push_p99_ms"] <= figures["push_max_ms"] < 5000
    assert figures["wrong_audience"] == 0 and figures["sockets_closed_early"] == 0
    assert figures["cpu_us_per_command"]["serve"] > 0


def test_the_command_is_a_click_command_with_its_defaults_in_the_help():
    result = CliRunner().invoke(bench.command, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--rate FLOAT RANGE" in text and "--sockets" in text and "[default: 64;" in text
    refused = CliRunner().invoke(bench.command, ["--games", "0"])
    assert refused.exit_code == 2 and "--games" in refused.output


def test_a_driver_plays_its_window_without_the_garbage_collector_and_turns_it_back_on_after(monkeypatch):
    """The driver's own collections would stop its loop mid-window and be timed as the server's latency."""
    import asyncio
    import gc
    import queue

    seen: list[bool] = []

    async def drive_games(base, config, window, stats, ready):
        ready.set()
        while window.start == float("inf"):  # until the driver is told the window
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)
        seen.append(gc.isenabled())

    monkeypatch.setattr(driver, "drive_games", drive_games)
    control, results = queue.Queue(), queue.Queue()
    control.put((0.0, 1.0))
    assert gc.isenabled()
    asyncio.run(driver._driver("http://127.0.0.1:1", {"index": 0, "mode": "play"}, control, results))
    assert seen == [False]
    assert gc.isenabled()
    assert [results.get_nowait()[0], results.get_nowait()[0]] == ["ready", "done"]
