"""``souk bench bots``: win rates with Wilson intervals, the share of games that end, bad input refused."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from services.bench.bots import bench, play, wilson
from services.bots import strategy
from services.cli.main import cli


def test_the_wilson_interval_is_the_textbook_one():
    # Wilson (1927); e.g. 5 of 10: 0.2366 to 0.7634, 0 of 10: 0 to 0.2775, 10 of 10: 0.7225 to 1
    assert [round(x, 4) for x in wilson(5, 10)] == [0.2366, 0.7634]
    assert [round(x, 4) for x in wilson(0, 10)] == [0.0, 0.2775]
    assert [round(x, 4) for x in wilson(10, 10)] == [0.7225, 1.0]
    assert [round(x, 4) for x in wilson(81, 100)] == [0.7222, 0.8749]
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_game_stops_at_its_bound_and_counts_as_not_ended():
    out = play("karawane", 2, [strategy("random"), strategy("random")], seed=1, bound=50)
    assert out["winners"] is None and out["commands"] == 50 and sum(out["moves"]) == 50


def test_the_seat_of_a_rotates_and_the_summary_adds_up():
    summary = bench("yspahan", 2, 4, ("greedy", "random"), {"greedy": {"samples": 1}}, seed=3)
    assert summary["games"] == 4 and summary["ended"] == 4 and summary["ended_share"] == 1.0
    low, high = summary["win_rate_a_95"]
    assert low <= summary["win_rate_a"] <= high
    assert summary["times_fair_share"] == summary["win_rate_a"] * 2
    same = bench("yspahan", 2, 4, ("greedy", "random"), {"greedy": {"samples": 1}}, seed=3)
    assert same["wins_a"] == summary["wins_a"]  # seeded: the same games again


def test_souk_bench_bots_prints_the_win_rate_and_the_ended_share():
    done = CliRunner().invoke(cli, ["bench", "bots", "--game", "karawane", "--games", "2", "--strategies",
                                    "seeker,seeker", "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output.strip().splitlines()[-1])
    assert summary["seats"] == 2 and summary["ended"] == 2 and summary["a"] == summary["b"] == "seeker"
    text = CliRunner().invoke(cli, ["bench", "bots", "--game", "yspahan", "--games", "2"]).output
    assert "greedy wins" in text and "95% CI" in text and "ended within 5000 commands" in text


@pytest.mark.parametrize("args,code", [
    (["--game", "chess"], "unknown_game"),
    (["--game", "yspahan", "--strategies", "greedy,minimax"], "unknown_strategy"),
    (["--game", "yspahan", "--strategies", "greedy"], "bad_strategies"),
    (["--game", "samarkand", "--seats", "2"], "bad_seat_count"),
    (["--game", "yspahan", "--budget", "0"], "--budget"),
    (["--game", "yspahan", "--processes", "8"], "--processes"),
])
def test_bad_input_is_refused_with_its_code_and_plays_nothing(args, code):
    done = CliRunner().invoke(cli, ["bench", "bots", *args])
    assert done.exit_code == 2 and code in done.output, done.output
    assert "wins" not in done.output


def test_souk_bench_bots_logs_each_game_as_it_ends_and_passes_mcts_its_policy(tmp_path):
    log = tmp_path / "games.jsonl"
    done = CliRunner().invoke(cli, ["bench", "bots", "--game", "yspahan", "--games", "2", "--seed", "5",
                                    "--strategies", "mcts,greedy", "--iterations", "3", "--policy", "random",
                                    "--samples", "1", "--log", str(log), "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output.strip().splitlines()[-1])
    assert summary["settings"]["mcts"]["policy"] == "random"
    games = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(g["game"], g["seed"], g["seat_a"]) for g in games] == [(0, 5, 0), (1, 6, 1)]
    assert sum(g["won_a"] for g in games) == summary["wins_a"]
    assert all(g["winners"] is not None and g["commands"] > 0 for g in games)
