"""The benchmark commands run and print their figures (a short run: this checks the tool, not the speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def souk(*args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-m", "services.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pipeline_benchmark_plays_games_through_real_redis_and_prints_its_figures(redis_url):
    result = souk("bench", "pipeline", "--game", "yspahan", "--seconds", "2", "--games", "20", "--projectors", "2",
                  "--json",
                  env={"REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": ""})
    # not "none refused": two engines sharing the group may decide a seat's later command first (superseded)
    assert result["commands"] > 0, result
    assert result["commands_per_s"] > 0 and 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["redis_xadd_per_s"] > 0 and result["machine_domain_games_per_s"] > 0
    assert set(result["cpu_us_per_command"]) == {"driver", "engine", "projector", "redis_events"}
    assert all(v > 0 for v in result["cpu_us_per_command"].values()), result["cpu_us_per_command"]
    assert result["engine_conflicts"] == 0  # one engine: its cached games are never behind


def test_the_pipeline_benchmark_plays_istanbul_solo(redis_url):
    result = souk("bench", "pipeline", "--game", "istanbul", "--seats", "1", "--seconds", "1", "--games", "5",
                  "--json", env={"REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": ""})
    assert (result["game"], result["seats"]) == ("istanbul", 1) and "--seats 1" in result["command"]
    # not "none refused": two engines sharing the group may decide a seat's later command first (superseded)
    assert result["commands"] > 0, result


def test_the_pipeline_benchmark_refuses_a_seat_count_the_game_is_not_played_with():
    done = subprocess.run([sys.executable, "-m", "services.cli", "bench", "pipeline", "--game", "istanbul",
                           "--seats", "6"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "istanbul is played by 1 to 5 seats, not 6" in done.stderr


@pytest.mark.parametrize(("game", "seats"), [("samarkand", 3), ("istanbul", 1), ("istanbul", 5)])
def test_the_domain_benchmark_plays_whole_games(game, seats):
    result = souk("bench", "domain", "--game", game, "--seats", str(seats), "--seconds", "1", "--json")
    assert result["games"] >= 1 and result["commands_per_s"] > 0


def test_the_history_benchmark_times_the_view_at_a_random_version_and_souk_verify():
    """Two embedded Redis started and a whole (two-seat) game played first: about 5 s, the price of measuring a
    finished game."""
    result = souk("bench", "history", "--title", "yspahan:2", "--samples", "10", "--every", "50", "--json")
    figures = result["view_at"]["yspahan"]
    assert figures["events"] > 100 and figures["snapshot_count"] == figures["events"] // 50
    for mode in ("snapshots", "none"):
        f = figures[mode]
        assert f["samples"] == 10 and 0 < f["p50_ms"] <= f["p99_ms"], figures
    assert result["snapshot_every"] == 50 and result["command"].startswith("souk bench history")
    verified = result["verify"]["yspahan"]  # souk verify's speed on the game's record
    assert verified["events"] == figures["events"] and verified["commands"] > 0 and verified["record_bytes"] > 0
    assert 0 < verified["events_per_s_p50"] <= verified["events_per_s_best"] and verified["runs"] == 5



def test_the_pipeline_benchmark_runs_several_engines_that_each_own_partitions(redis_url):
    """``--engines 2`` on a store of 4 partitions: each engine owns two (services/store/leases.py), each is seen
    holding commands it was delivered (``engine_holders``: XPENDING samples) and spends CPU, and a game's commands
    reach the engine that has it cached: few conflicts (engines sharing every partition conflicted on about half
    of the commands)."""
    result = souk("bench", "pipeline", "--game", "yspahan", "--seconds", "3", "--games", "40", "--engines", "2",
                  "--json", env={"REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": "", "SOUK_PARTITIONS": "4"})
    assert result["commands"] > 0 and result["partitions"] == 4, result
    assert "--engines 2" in result["command"]
    assert {"engine-bench-engine-0", "engine-bench-engine-1"} <= set(result["engine_holders"]), result["engine_holders"]
    cpu = result["cpu_us_per_command"]
    assert cpu["engine_0"] > 0 and cpu["engine_1"] > 0 and cpu["engine"] >= cpu["engine_0"] + cpu["engine_1"] - 1
    assert result["engine_conflicts"] < result["commands"] / 10, result
