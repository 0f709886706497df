"""Time travel over the stores (issue #10 §1): the table at version N from the nearest snapshot the projector wrote
plus the game stream's entries after it (``services.history.travel.table_at``, what the gateway answers ``?at=N``
with) is the fold of the game's first N stored events, and so are its views, with snapshots and without any.

The games are random and hold undos: seeded playouts through the table with undo requests, answers and
withdrawals (``tests.domain.harness.play_with_undos``), each command's events appended to the event store as the
engine appends them (sealed envelopes, the compact stored forms, the command's seat, id and time), then projected.
A version inside a command (its events appended together) answers the table before that command.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from contracts.envelope import CHAIN, GENESIS_HASH, EventEnvelope, commitment, seal
from contracts.table import SeatJoined
from domain import table as tbl
from services.bench import storage as bench_storage
from services.history import travel
from services.projector.service import Projector
from services.store import keys
from services.store.codec import encoder, fold_stream, stored_forms, tag_of
from services.store.events import Append, RedisEventStore
from services.store.streams import ensure_group
from tests.domain.harness import Played, encoded, play_with_undos

pytestmark = pytest.mark.anyio
SEED = b"s" * 32


async def append_played(store: RedisEventStore, game_id: str, played: Played) -> None:
    """Appends the played game's events as the engine would: one append per command, sealed, chained, with the
    public form and commitment of an event that hides something."""
    table, head, i = tbl.EMPTY, GENESIS_HASH, 0
    events, origins = played.events, played.origins
    while i < len(events):
        origin, start, prev = origins[i], table.version, head
        sealed: list[EventEnvelope] = []
        while i < len(events) and origins[i] == origin:
            event = events[i]
            table = tbl.evolve(table, event)
            payload = encoder.encode(event)
            spectator = tbl.redact(table, event, None)
            secret: dict[str, Any] = {}
            if spectator is not event:
                secret = {"public": msgspec.Raw(encoder.encode(spectator)),
                          "commitment": commitment(SEED, game_id, table.version, payload)}
            env = seal(EventEnvelope(game_id=game_id, seq=table.version, type=tag_of(event), payload=msgspec.Raw(payload),
                                     command_id=origin.command, recorded_at=float(start), prev_hash=head,
                                     seat=event.seat if isinstance(event, SeatJoined) else origin.seat,
                                     chain=CHAIN, **secret))
            head = env.hash
            sealed.append(env)
            i += 1
        append = Append(game_id, table.game, start, [encoder.encode(e) for e in sealed], prev_hash=prev, head=head,
                        stored=stored_forms(sealed, prev))
        [result] = await store.append([append])
        assert result.status == "ok", result


async def project_all(events, projector: Projector) -> None:
    await ensure_group(events, keys.events(0), keys.PROJECTOR_GROUP)
    await bench_storage.project_all(events, projector, "test")


def before_command(commands: list, n: int) -> int:
    """The version a reader sees at ``n``: ``n`` if it ends a command (``commands``: each event's command, in
    order), else the version before the command its event belongs to."""
    while 0 < n < len(commands) and commands[n] == commands[n - 1]:
        n -= 1
    return n


def views_json(table: tbl.Table, game_id: str) -> bytes:
    return encoded(list(tbl.views(table, game_id).values()))


CASES = [("yspahan", 3, 31, "with_consent", 7), ("samarkand", 4, 32, "own_turn", 10)]


@pytest.mark.parametrize(("name", "seats", "seed", "undo", "every"), CASES)
async def test_the_table_at_n_is_the_fold_of_the_first_n_stored_events_with_snapshots_and_without(
        stores, name, seats, seed, undo, every):
    events, views = stores
    played, counts = play_with_undos(name, seats, seed, undo, commands=250)
    assert counts["applied"] >= 1, counts  # the property covers undos
    store = RedisEventStore(events)
    projector = Projector(views, store, snapshot_every=every)
    game_id = f"travel-{name}"
    try:
        await append_played(store, game_id, played)
        await project_all(events, projector)
        envelopes = await store.read(game_id)
        length = len(envelopes)
        assert length == len(played.events)
        snapshots = await views.zcard(keys.snapshots(game_id))
        assert snapshots == length // every  # one every `every` events
        rng = random.Random(seed)
        starts = [v for v in range(2, length) if played.origins[v - 1] == played.origins[v - 2]]  # inside a command
        versions = sorted({1, every - 1, every, every + 1, length, *rng.sample(starts, 8),
                           *(rng.randint(1, length) for _ in range(30))})
        answers = {}
        inside = 0
        for n in versions:
            at = await travel.table_at(events, views, game_id, n)
            seen = before_command(played.origins, n)
            inside += seen != n
            expected = fold_stream(envelopes[:seen])
            assert at.length == length and at.table.version == seen, n
            assert at.snapshot in (seen - seen % every, 0), n  # 0: its command began before the snapshot
            assert encoded(at.table) == encoded(expected), n
            assert views_json(at.table, game_id) == views_json(expected, game_id), n
            answers[n] = views_json(at.table, game_id)
        assert inside and any(before_command(played.origins, n) == n for n in versions)  # both kinds covered
        await views.delete(keys.snapshots(game_id))  # a cache: without it, the same answers
        for n in versions:
            at = await travel.table_at(events, views, game_id, n)
            assert at.snapshot == 0 and views_json(at.table, game_id) == answers[n], n
        # a snapshot that does not decode is ignored, never believed
        await views.zadd(keys.snapshots(game_id), {f"{every}:not a table": every})
        at = await travel.table_at(events, views, game_id, every + 1)
        assert at.snapshot == 0 and views_json(at.table, game_id) == answers[every + 1]
    finally:
        await projector.aclose()
        await store.aclose()


async def test_a_version_the_game_does_not_have_is_refused_and_a_game_that_does_not_exist_has_length_zero(
        stores, finished):
    events, views = stores
    game_id = finished[0]
    length = await events.xlen(keys.game_stream(game_id))
    for bad in (0, length + 1):
        with pytest.raises(travel.BadVersion):
            await travel.table_at(events, views, game_id, bad)
    at = await travel.table_at(events, views, "no-such-game", 5)
    assert at.length == 0 and not at.table.exists
    at = await travel.table_at(events, views, game_id, length)
    assert at.over and at.table.status == tbl.OVER
    at = await travel.table_at(events, views, game_id, length - 1)
    assert at.over and at.table.status == tbl.PLAYING  # over now, not then
