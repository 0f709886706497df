"""Undo through the services (issue #10 section 2): every fold over stored envelopes carries the events' origins,
so the engine grants an undo on a game it loads from the store, and the projector's views (however it came by
its table: its cache, a reload at a position, a rebuild) offer the versions the engine grants. Against a real
Redis; the rules themselves: tests/domain/test_undo.py."""

from __future__ import annotations

import collections
import itertools
import random

import msgspec
import pytest

from contracts.readmodels import TableView
from contracts.table import AcceptUndo, CreateGame, DeclineUndo, JoinSeat, RequestUndo, UndoneRange
from domain import table as tbl
from domain.kernel import get_game
from services.engine.service import Engine
from services.history import record as records
from services.history.audit import verify_audit, verify_history
from services.history.verify import verify_record
from services.projector.history import read_history
from services.projector.service import Projector
from services.store import keys
from services.store.codec import command_decoder, decode_stream, encoder, table_event_decoder
from services.store.events import RedisEventStore
from tests.services.test_engine import cmd, th
from tests.services.test_projector import project_all

pytestmark = pytest.mark.anyio
SAMARKAND = get_game("samarkand")
view_of = msgspec.json.Decoder(TableView).decode


def a_move_or_an_undo(table: tbl.Table, rng: random.Random, accept: float) -> tuple[int, object]:
    """A random seat's next step in a 3-seat Samarkand: an answer to the pending undo request (accepted with
    probability ``accept``), else now and then (30%) an undo request, else one of an awaited seat's legal commands."""
    request = table.request
    asking = [(s, v) for s in range(3) for v in tbl.undo_targets(table, s)]
    if request is not None:
        seat = rng.choice([s for s in request.asked if s not in request.accepted])
        return seat, AcceptUndo() if rng.random() < accept else DeclineUndo()
    if asking and rng.random() < 0.3:
        seat, version = rng.choice(asking)
        return seat, RequestUndo(version)
    seat = rng.choice(SAMARKAND.flow(table.state).awaiting)
    return seat, rng.choice(SAMARKAND.legal_commands(table.state, seat))


async def chosen(engine: Engine, undo: str) -> list[int]:
    """Samarkand, 3 seats: seats 0 and 1 chose a card (no barrier). Returns the versions before each choice."""
    replies = await engine.handle(
        [cmd("g1", CreateGame("samarkand", "t", 3, {"undo": undo}, "00ff" * 16, unfair=True), cid="create")]
        + [cmd("g1", JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(3)])
    assert {r.status for r in replies} == {"accepted"}, replies
    before = []
    for seat in (0, 1):
        table = (await engine.load("g1")).table
        before.append(table.version)
        command = SAMARKAND.legal_commands(table.state, seat)[0]
        [reply] = await engine.handle([cmd("g1", command, seat=seat, token=th(seat), cid=f"choose{seat}")])
        assert reply.status == "accepted", reply
    return before


async def test_the_engine_grants_an_undo_on_a_game_it_loads_from_the_store(redis):
    store = RedisEventStore(redis)
    before = await chosen(Engine(redis, store), "own_turn")
    fresh = Engine(redis, store)  # no cache: the game is folded from its stream
    assert tbl.undo_targets((await fresh.load("g1")).table, 1) == (before[1],)
    [reply] = await fresh.handle([cmd("g1", RequestUndo(before[1]), seat=1, token=th(1), cid="undo")])
    assert (reply.status, reply.events) == ("accepted", 1), reply
    table = (await fresh.load("g1")).table
    assert table.undone == (UndoneRange(before[1] + 1, before[1] + 1, 1),)
    assert tbl.undo_targets(table, 0) == (before[0],)  # seat 0's choice is its last move again


async def test_the_engine_decides_an_undo_on_the_table_it_evolved_itself(redis):
    engine = Engine(redis, RedisEventStore(redis))
    before = await chosen(engine, "with_consent")
    [asked] = await engine.handle([cmd("g1", RequestUndo(before[0]), seat=0, token=th(0), cid="undo")])
    assert (asked.status, asked.events) == ("accepted", 1), asked
    replies = await engine.handle([cmd("g1", AcceptUndo(), seat=s, token=th(s), cid=f"yes{s}") for s in (1, 2)])
    assert [(r.status, r.events) for r in replies] == [("accepted", 1), ("accepted", 2)], replies
    assert (await engine.load("g1")).table.undone[0].first == before[0] + 1


async def test_the_projectors_views_offer_what_the_engine_grants_however_it_got_its_table(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    before = await chosen(engine, "own_turn")
    await project_all(redis, Projector(redis, store))  # its own evolve, event by event
    assert view_of(await redis.hget(keys.views("g1"), "1")).undo.to_versions == (before[1],)
    await engine.handle([cmd("g1", RequestUndo(before[1]), seat=1, token=th(1), cid="undo")])
    # a fresh projector: the game's table folded from the store at its position, then the undo evolved
    await project_all(redis, Projector(redis, store))
    projected = {s: await redis.hget(keys.views("g1"), keys.audience(s)) for s in (0, 1, 2, None)}
    table = (await Engine(redis, store).load("g1")).table
    assert projected == {s: encoder.encode(v) for s, v in tbl.views(table, "g1").items()}
    assert view_of(projected[0]).undo.to_versions == (before[0],)
    await Projector(redis, store).rebuild()
    assert {s: await redis.hget(keys.views("g1"), keys.audience(s)) for s in projected} == projected


async def test_the_history_marks_the_undone_events_from_the_read_model_and_from_the_stream(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    before = await chosen(engine, "own_turn")
    await engine.handle([cmd("g1", RequestUndo(before[1]), seat=1, token=th(1), cid="undo")])
    await project_all(redis, Projector(redis, store))
    kept = await read_history(redis, redis, "g1", None, 0, 100)
    assert [e.seq for e in kept.entries if e.undone] == [before[1] + 1]
    await redis.delete(keys.history("g1"))  # as after a finished game's expiry: derived from the stream
    derived = await read_history(redis, redis, "g1", 0, 0, 100)
    assert [e.seq for e in derived.entries if e.undone] == [before[1] + 1]
    page = await read_history(redis, redis, "g1", 0, before[1], 1)  # a page holding only the undone event
    assert [(e.seq, e.undone) for e in page.entries] == [(before[1] + 1, True)]


def test_the_engines_decoder_reads_undo_commands_the_generic_route_refuses_them():
    from services.gateway.commands import convert

    decode = command_decoder("samarkand").decode
    assert decode(encoder.encode(RequestUndo(4))) == RequestUndo(4)
    assert decode(b'{"type":"table.AcceptUndo"}') == AcceptUndo()
    for body in ({"type": "table.RequestUndo", "to_version": 4}, {"type": "table.AcceptUndo"},
                 {"type": "table.DeclineUndo"}):
        with pytest.raises(msgspec.ValidationError, match="undo"):
            convert("samarkand", body)
    with pytest.raises(msgspec.ValidationError):  # no game: only the table's commands
        command_decoder(None).decode(encoder.encode(RequestUndo(4)))



async def test_a_game_played_to_the_end_with_undos_keeps_a_chain_and_a_record_that_verify(redis):
    """Samarkand with_consent played to the end through the engine, with undos granted, asked, accepted and
    declined on the way: its audit, its record and the spectator's history all verify."""
    rng = random.Random(3)
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    await chosen(engine, "with_consent")
    ids = itertools.count()
    counts = collections.Counter()
    while (table := (await engine.load("g1")).table).status == tbl.PLAYING:
        seat, body = a_move_or_an_undo(table, rng, accept=0.8)
        [reply] = await engine.handle([cmd("g1", body, seat=seat, token=th(seat), cid=f"c{next(ids)}")])
        assert reply.status == "accepted", (body, reply)
        counts[type(body).__name__] += 1
    envelopes = await store.read("g1")
    ranges = tbl.undone_ranges(decode_stream(envelopes))  # every undo's (a view shows only the latest)
    assert table.status == tbl.OVER and len(ranges) >= 3 and table.undone == (ranges[-1],), (counts, ranges)
    assert counts["AcceptUndo"] and counts["DeclineUndo"], counts

    seed = await redis.get(keys.seed("g1"))
    created = table_event_decoder.decode(envelopes[0].payload)
    assert verify_audit({"seed": seed.hex(), "seed_hash": created.seed_hash,
                         "events": msgspec.json.decode(encoder.encode(envelopes))}) == []
    assert records.verify(records.make("g1", envelopes, seed)) == []
    # the record with its commands: every command re-run by the rules (undos included) makes the same events
    _, commands = await store.read_with_commands("g1")
    verdict = verify_record(records.make("g1", envelopes, seed, commands=commands))
    assert verdict.ok, verdict
    await project_all(redis, Projector(redis, store))
    page = await read_history(redis, redis, "g1", None, 0, 1000)
    assert verify_history("g1", msgspec.json.decode(encoder.encode(page.entries))) == []
    flagged = {e.seq for e in page.entries if e.undone}
    assert flagged == {v for r in ranges for v in range(r.first, r.last + 1)}
    await redis.delete(keys.history("g1"))  # derived from the stream: the same marks
    derived = await read_history(redis, redis, "g1", None, 0, 1000)
    assert {e.seq for e in derived.entries if e.undone} == flagged
