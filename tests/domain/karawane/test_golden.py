"""A golden playthrough: one seeded 3-player game's command -> event transcript (the artifact seeker's), replayed
and compared. Regenerate after an intended rule change with ``SOUK_REGEN_GOLDEN=1`` and review the diff."""

from __future__ import annotations

from pathlib import Path

from contracts.karawane import Options
from domain.karawane import GAME, rules
from tests.domain.harness import golden_transcript
from tests.domain.karawane.support import random_game

SEATS, SEED = 3, 2  # ends in round 41
GOLDEN = Path(__file__).parent / "golden" / f"karawane-{SEATS}p-seed{SEED}.json"
# The same game recorded under the rules as they landed (commit 067a047), before revision 2: a game created then
# keeps playing, and re-running, as it was recorded (``Options.rules``).
GOLDEN_RULES_1 = Path(__file__).parent / "golden" / f"karawane-{SEATS}p-seed{SEED}-rules1.json"


def test_the_golden_three_player_game_replays_identically():
    final = golden_transcript(GAME, GOLDEN, SEATS, SEED, lambda seats, seed: random_game(seats, seed),
                              Options(rules=rules.RULES))
    assert final.winners and all(len(final.details["seats"][w]["artifacts"]) == 3 for w in final.winners)


def test_the_game_recorded_under_the_first_rules_replays_identically_under_revision_1():
    final = golden_transcript(GAME, GOLDEN_RULES_1, SEATS, SEED,
                              lambda seats, seed: random_game(seats, seed, rules_revision=1), Options(rules=1))
    assert final.winners
