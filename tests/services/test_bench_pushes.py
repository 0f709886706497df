"""``souk bench pushes``: bytes per WebSocket push, whole views and JSON Patch frames (services/bench/pushes.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from services.cli.main import cli


def test_souk_bench_pushes_measures_whole_and_patched_pushes_for_each_title():
    result = CliRunner().invoke(cli, ["bench", "pushes", "--games", "1", "--title", "yspahan:2", "--title",
                                      "samarkand:3", "--max-commands", "40", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)["titles"]
    assert set(figures) == {"yspahan", "samarkand"}
    for name, f in figures.items():
        audiences = f["seats"] + 1
        assert f["commands"] == 40 and f["pushes"] == audiences * (f["commands"] - 1), (name, f)
        # a push patched is never bigger than whole (the whole view goes when the patch is not smaller)
        assert 0 < f["patch_mean"] < f["whole_mean"] and f["patch_max"] <= f["whole_max"]
        assert f["ratio"] == round(f["patch_mean"] / f["whole_mean"], 3)
        assert 0 < f["step_p50_us"] <= f["step_p99_us"]


def test_souk_bench_pushes_prints_a_table():
    result = CliRunner().invoke(cli, ["bench", "pushes", "--games", "1", "--title", "istanbul:2",
                                      "--max-commands", "10"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith("istanbul") and "command: souk bench pushes" in result.output
