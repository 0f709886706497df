from __future__ import annotations

import pytest

from domain import kernel
from tests.services import tally


@pytest.fixture(autouse=True)
def tally_game():
    """Registers the test-only game 'tally' beside the real ones."""
    kernel.games()  # the built-in games first
    kernel._GAMES["tally"] = tally.GAME
    yield tally.GAME
    kernel._GAMES.pop("tally", None)
