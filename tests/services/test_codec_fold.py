"""``codec.fold_stream``: the one fold over stored envelopes (engine, projectors, records) carries each event's
origin, so a table folded from the store decides undos as the engine's does."""

from __future__ import annotations

import msgspec

from contracts.envelope import EventEnvelope
from domain import table as tbl
from domain.kernel import get_game
from services.store.codec import fold_stream, origins
from tests.domain.harness import Played


def envelopes_of(played: Played) -> list[EventEnvelope]:
    return [
        EventEnvelope(game_id="g", seq=i + 1, type=e.__struct_config__.tag, payload=msgspec.Raw(msgspec.json.encode(e)),
                      command_id=o.command, seat=o.seat, recorded_at=0.0, prev_hash="")
        for i, (e, o) in enumerate(zip(played.events, played.origins))
    ]


def played_game() -> Played:
    played = Played(get_game("samarkand"), 3)
    for _ in range(4):
        seat = tbl.flow(played.table).awaiting[0]
        played.send(seat, played.legal(seat)[0])
    return played


def test_origins_are_the_envelopes_seat_and_command_id() -> None:
    played = played_game()
    assert origins(envelopes_of(played)) == played.origins


def test_fold_stream_equals_the_engines_fold_whole_or_in_two_parts() -> None:
    played = played_game()
    envelopes = envelopes_of(played)
    assert fold_stream(envelopes) == played.table
    half = len(envelopes) // 2
    assert fold_stream(envelopes[half:], fold_stream(envelopes[:half])) == played.table
    assert tbl.undo_targets(fold_stream(envelopes), 0) == tbl.undo_targets(played.table, 0)


def test_a_fold_without_origins_differs_from_the_stores_fold() -> None:
    # the failure this seam prevents: a table folded without origins grants no undo
    played = played_game()
    assert tbl.fold(played.events) != fold_stream(envelopes_of(played))
