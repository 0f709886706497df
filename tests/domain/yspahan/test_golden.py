"""A golden playthrough: one seeded 3-player game's command -> event transcript, replayed and compared.

Regenerate after an intended rule change with ``SOUK_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

from domain.yspahan import GAME
from tests.domain.harness import golden_transcript
from tests.domain.yspahan.support import random_game

SEATS, SEED = 3, 2024
GOLDEN = Path(__file__).parent / "golden" / f"yspahan-{SEATS}p-seed{SEED}.json"


def test_the_golden_three_player_game_replays_identically():
    final = golden_transcript(GAME, GOLDEN, SEATS, SEED, random_game)  # every event compared inside
    assert len(final.scores) == SEATS and final.winners  # the game it replays is a whole one
