"""A golden playthrough: one seeded 3-player game's command -> event transcript, replayed and compared.

Regenerate after an intended rule change with ``SOUK_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Union

import msgspec

from contracts.istanbul import COMMANDS, EVENTS
from domain.chance import Chance
from domain.istanbul import GAME
from tests.domain.istanbul.support import random_game, ruby_seeker

SEATS, SEED = 3, 41  # a game that ends with the round of the 10th ruby (ruby-seeking policy)
GOLDEN = Path(__file__).parent / "golden" / f"istanbul-{SEATS}p-seed{SEED}.json"
commands = msgspec.json.Decoder(Union[COMMANDS])  # type: ignore[valid-type]
events_decoder = msgspec.json.Decoder(Union[EVENTS])  # type: ignore[valid-type]


def plain(value) -> object:
    """JSON's own shape (lists, not tuples), as stored in the golden file."""
    return json.loads(msgspec.json.encode(value))


def record() -> dict:
    secret = SEED.to_bytes(8, "big")
    options = GAME.options_type()
    setup = GAME.setup(SEATS, options, Chance(secret, 0))
    turns = [
        {"seat": seat, "command": plain(command), "events": plain(events)}
        for _, seat, command, events in random_game(SEATS, SEED, ruby_seeker)
    ]
    state = GAME.initial_state(SEATS, options)
    for event in setup:
        state = GAME.evolve(state, event)
    for turn in turns:
        for event in turn["events"]:
            state = GAME.evolve(state, events_decoder.decode(json.dumps(event).encode()))
    final = GAME.result(state)
    return {"seats": SEATS, "seed": SEED, "final_scores": list(final.scores), "setup": plain(setup),
            "transcript": turns}


def dump(golden: dict) -> str:
    """One line per command, so that a rule change shows as a readable diff."""
    head = {k: v for k, v in golden.items() if k != "transcript"}
    lines = [json.dumps(turn, ensure_ascii=False) for turn in golden["transcript"]]
    return json.dumps(head)[:-1] + ', "transcript": [\n' + ",\n".join(lines) + "\n]}\n"


def test_the_golden_three_player_game_replays_identically():
    if os.environ.get("SOUK_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(dump(record()))
    assert GOLDEN.exists(), f"{GOLDEN} is missing: run with SOUK_REGEN_GOLDEN=1"
    golden = json.loads(GOLDEN.read_text())
    secret = golden["seed"].to_bytes(8, "big")
    options = GAME.options_type()
    state = GAME.initial_state(golden["seats"], options)
    setup = GAME.setup(golden["seats"], options, Chance(secret, 0))
    assert plain(setup) == golden["setup"]
    for event in setup:
        state = GAME.evolve(state, event)
    for position, turn in enumerate(golden["transcript"], start=1):
        command = commands.decode(json.dumps(turn["command"]).encode())
        events = GAME.decide(state, turn["seat"], command, Chance(secret, position))
        assert plain(events) == turn["events"], f"command {position}: {turn['command']}"
        for event in events:
            state = GAME.evolve(state, event)
    final = GAME.result(state)
    assert final is not None and list(final.scores) == golden["final_scores"]
    assert final.details["reason"] == "rubies"
