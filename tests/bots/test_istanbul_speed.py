"""The Istanbul kernel's speed-ups (memoized payments and choices) change nothing of what the bots compute: with
the same seeds and an iteration cap (no clock), ``mcts`` and ``greedy`` play exactly the commands recorded with the
code before them (tests/bots/istanbul_record.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bots.istanbul_record import SEEDS, play

RECORDED = json.loads((Path(__file__).parent / "data" / "istanbul_choices.json").read_text())


@pytest.mark.parametrize("seed", SEEDS)
def test_istanbul_same_choices(seed: int) -> None:
    assert json.loads(json.dumps(play(seed))) == RECORDED[str(seed)]
