"""A golden playthrough: one seeded 3-player game's command -> event transcript (the artifact seeker's), replayed
and compared. Regenerate after an intended rule change with ``SOUK_REGEN_GOLDEN=1`` and review the diff."""

from __future__ import annotations

from pathlib import Path

from domain.karawane import GAME
from tests.domain.harness import golden_transcript
from tests.domain.karawane.support import random_game

SEATS, SEED = 3, 2  # ends in round 41
GOLDEN = Path(__file__).parent / "golden" / f"karawane-{SEATS}p-seed{SEED}.json"


def test_the_golden_three_player_game_replays_identically():
    final = golden_transcript(GAME, GOLDEN, SEATS, SEED, lambda seats, seed: random_game(seats, seed))
    assert final.winners and all(len(final.details["seats"][w]["artifacts"]) == 3 for w in final.winners)
