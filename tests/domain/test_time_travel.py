"""The table at any version (the kernel side of time travel, issue #10): from a snapshot at version S plus the
events after it, equal to the fold of the first N events, undos included.

Property: seeded random games of every title, played through legal commands with random undo requests, answers
and withdrawals interleaved where they are legal; for random N and S <= N, ``table_at(N, events[S:],
decode_table(encode_table(fold(events[:S]))))`` is the fold of the first N events, and so are its views.
"""

from __future__ import annotations

import random

import pytest

from domain import table as tbl
from domain.kernel import games
from tests.domain.harness import encoded, play_with_undos

GAMES = games()


CASES = [("samarkand", 3, 11, "with_consent"), ("samarkand", 4, 12, "own_turn"), ("samarkand", 5, 13, "with_consent"),
         ("yspahan", 2, 21, "with_consent"), ("yspahan", 3, 22, "own_turn"), ("yspahan", 4, 23, "with_consent")]


@pytest.mark.parametrize(("name", "seats", "seed", "undo"), CASES)
def test_the_table_at_n_from_a_snapshot_and_the_tail_is_the_fold_of_the_first_n_events(name, seats, seed, undo):
    if name not in GAMES:
        pytest.skip(f"{name} is not in this build")
    played, counts = play_with_undos(name, seats, seed, undo, commands=400)
    assert counts["applied"] >= 2, counts  # undos happened (the property covers them)
    if undo == "with_consent":
        assert counts["requested"] >= 1, counts
    events, origins = played.events, played.origins
    assert encoded(tbl.fold(events, origins=origins)) == encoded(played.table)
    rng = random.Random(seed)
    tables = [tbl.EMPTY]  # the fold of the first n events, for every n
    for event, origin in zip(events, origins):
        tables.append(tbl.evolve(tables[-1], event, origin))
    for _ in range(25):
        n = rng.randint(0, len(events))
        s = rng.randint(0, n)
        snapshot = tbl.decode_table(tbl.encode_table(tables[s]))
        at_n = tbl.table_at(n, events[s:], snapshot, origins[s:])
        assert encoded(at_n) == encoded(tables[n]), (n, s)
        if at_n.exists:
            assert encoded([*tbl.views(at_n, "g").values()]) == encoded([*tbl.views(tables[n], "g").values()]), (n, s)
        blind = tbl.table_at(n, events[:n])  # without the origins: the same game at every version
        assert encoded(blind.state) == encoded(tables[n].state) and blind.undone == tables[n].undone


def test_every_snapshot_of_a_game_with_undos_decodes_to_the_same_table():
    played, counts = play_with_undos("yspahan", 3, 7, "with_consent", commands=150)
    table = tbl.EMPTY
    for event, origin in zip(played.events, played.origins):
        table = tbl.evolve(table, event, origin)
        assert encoded(tbl.decode_table(tbl.encode_table(table))) == encoded(table)
        assert tbl.decode_table(tbl.encode_table(table)) == table or table.result is not None


def test_the_table_at_a_version_outside_the_snapshot_and_its_events_is_refused():
    played, _ = play_with_undos("samarkand", 3, 1, "own_turn", commands=20)
    snapshot = tbl.fold(played.events[:10])
    with pytest.raises(ValueError):
        tbl.table_at(9, played.events[10:], snapshot)
    with pytest.raises(ValueError):
        tbl.table_at(len(played.events) + 1, played.events[10:], snapshot)
    with pytest.raises(ValueError):
        tbl.fold(played.events, origins=played.origins[:-1])
    assert tbl.table_at(10, [], snapshot) is snapshot
