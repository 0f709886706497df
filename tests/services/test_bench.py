"""The benchmark commands run and print their figures (a short run: this checks the tool, not the speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def souk(*args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-m", "services.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pipeline_benchmark_plays_games_through_real_redis_and_prints_its_figures(redis_url):
    result = souk("bench", "pipeline", "--game", "yspahan", "--seconds", "2", "--games", "20", "--projectors", "2",
                  "--json",
                  env={"REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": ""})
    assert result["commands"] > 0 and result["rejected"] == 0, result
    assert result["commands_per_s"] > 0 and 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["redis_xadd_per_s"] > 0 and result["machine_domain_games_per_s"] > 0
    assert set(result["cpu_us_per_command"]) == {"driver", "engine", "projector", "redis_events"}
    assert all(v > 0 for v in result["cpu_us_per_command"].values()), result["cpu_us_per_command"]


def test_the_domain_benchmark_plays_whole_games():
    result = souk("bench", "domain", "--game", "samarkand", "--seats", "3", "--seconds", "1", "--json")
    assert result["games"] >= 1 and result["commands_per_s"] > 0
