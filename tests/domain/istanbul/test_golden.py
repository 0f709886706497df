"""A golden playthrough: one seeded 3-player game's command -> event transcript, replayed and compared.

Regenerate after an intended rule change with ``SOUK_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

from domain.istanbul import GAME
from tests.domain.harness import golden_transcript
from tests.domain.istanbul.support import random_game, ruby_seeker

SEATS, SEED = 3, 41  # a game that ends with the round of the 10th ruby (ruby-seeking policy)
GOLDEN = Path(__file__).parent / "golden" / f"istanbul-{SEATS}p-seed{SEED}.json"


def test_the_golden_three_player_game_replays_identically():
    final = golden_transcript(GAME, GOLDEN, SEATS, SEED, lambda seats, seed: random_game(seats, seed, ruby_seeker))
    assert final.details["reason"] == "rubies"
