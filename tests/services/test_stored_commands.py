"""Accepted commands stored with their events (issue #10 section 4): once per command, compactly; streams written
before stay readable; every command of every game comes back as it was."""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import bot_command, games
from services.engine.service import Engine
from services.history import record as records
from services.history.verify import verify_record
from services.store import keys
from services.store.codec import command_of, encoder, stored_command, stored_envelopes
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "yspahan_stream_compact_2026-11-23.json").read_text())

# The stored form of landed commands, as bytes (msgpack, hex): a command type's fields may gain trailing ones with
# defaults, never be reordered; if one of these changes, a stored command would be read as another.
LANDED = {
    "yspahan": [("93aa53656c65637444696365a3626167a463617264", {"type": "yspahan.SelectDice", "floor": "bag",
                                                              "action": "card", "discard": None}),
                ("92a9506c6163654375626501", None)],  # PlaceCube(1): a shop is a name
    "samarkand": [("92aa43686f6f73654361726405", {"type": "samarkand.ChooseCard", "value": 5}),
                  ("92a453746f70a462616e6b", {"type": "samarkand.Stop", "target": "bank"}),
                  ("91a450617373", {"type": "samarkand.Pass"})],
}


def commands_of_random_games(name: str, count: int = 3, seed: int = 1):
    """Every command of ``count`` random playouts of ``name`` (min seats), decided by the rules."""
    game, rng = games()[name], random.Random(seed)
    for _ in range(count):
        table = tbl.EMPTY
        first = [CreateGame(name, "t", game.min_seats, creator_hash="ab" * 32)]
        first += [JoinSeat(f"p{s}", f"{s:064x}") for s in range(game.min_seats)]
        for command in first:
            yield command
            table = tbl.fold(tbl.decide(table, None, None, command, Chance(bytes(32), table.version)), table)
        while table.status == tbl.PLAYING:
            seat = rng.choice(tbl.flow(table).awaiting)
            command = bot_command(tbl.game_of(table), table.state, seat, rng)  # a game random play rarely ends: its bot
            yield command
            decided = tbl.decide(table, seat, f"{seat:064x}", command, Chance(bytes(32), table.version))
            table = tbl.fold(decided, table)


@pytest.mark.parametrize("name", sorted(games()))
def test_every_command_of_a_game_comes_back_from_its_stored_form(name):
    seen = set()
    for command in commands_of_random_games(name):
        stored = stored_command(name, command)
        packed = msgspec.msgpack.decode(msgspec.msgpack.encode(stored))
        assert command_of(name, packed) == command == command_of(name, json.loads(encoder.encode(stored)))
        seen.add(type(command))
    assert len(seen) >= 4


def test_a_stored_command_is_its_values_in_field_order_without_the_game_name_nor_trailing_defaults():
    game_command = next(c for c in commands_of_random_games("yspahan") if type(c).__name__ == "SelectDice")
    stored = stored_command("yspahan", game_command)
    assert stored[0] == "SelectDice" and None not in stored[-1:]
    assert len(msgspec.msgpack.encode(stored)) < len(encoder.encode(game_command)) / 2
    assert stored_command("yspahan", JoinSeat("ann", "ab" * 32)) == ["table.JoinSeat", "ann", "ab" * 32]
    with pytest.raises(ValueError, match="not a command of yspahan"):
        command_of("yspahan", ["Fly", 1])
    with pytest.raises(ValueError, match="values for"):
        command_of("yspahan", ["EndTurn", 1, 2])


def test_the_stored_bytes_of_landed_commands_read_the_same():
    for name, landed in LANDED.items():
        for hexed, expected in landed:
            raw = msgspec.msgpack.decode(bytes.fromhex(hexed))
            if expected is None:  # a value that is no command is refused, not misread
                with pytest.raises(ValueError):
                    command_of(name, raw)
            else:
                assert msgspec.to_builtins(command_of(name, raw)) == expected


async def test_a_compact_stream_written_before_commands_were_kept_reads_as_it_was_and_its_game_goes_on(redis):
    game_id = FIXTURE["game_id"]
    for entry_id, raw in FIXTURE["entries"]:
        await redis.xadd(keys.game_stream(game_id), {"e": bytes.fromhex(raw)}, id=entry_id)
    await redis.set(keys.seed(game_id), bytes.fromhex(FIXTURE["seed"]))
    await redis.set(keys.head(game_id), FIXTURE["envelopes"][-1]["hash"])
    store = RedisEventStore(redis)
    envelopes, commands = await store.read_with_commands(game_id)
    assert [json.loads(encoder.encode(e)) for e in envelopes] == FIXTURE["envelopes"] and commands == {}
    engine = Engine(redis, store)
    table = (await engine.load(game_id)).table
    seat = tbl.flow(table).awaiting[0]
    command = tbl.game_of(table).legal_commands(table.state, seat)[0]
    [reply] = await engine.handle([CommandEnvelope("next", game_id, msgspec.Raw(encoder.encode(command)), seat=seat,
                                                   token_hash=f"{seat:064x}")])
    assert reply.status == "accepted"
    envelopes, commands = await store.read_with_commands(game_id)
    assert list(commands) == [len(FIXTURE["envelopes"]) + 1]  # the new command's, on its first event
    assert command_of("yspahan", commands[len(FIXTURE["envelopes"]) + 1]) == command
    assert [json.loads(encoder.encode(e)) for e in envelopes[:len(FIXTURE["envelopes"])]] == FIXTURE["envelopes"]
    new = [raw for _, f in await redis.xrange(keys.game_stream(game_id)) for raw in [f[b"e"]]][len(FIXTURE["entries"]):]
    assert all(raw[:1] != b"{" and b"yspahan." not in raw for raw in new)  # compact, the game's name left out
    await store.aclose()


async def test_a_record_of_a_game_whose_commands_were_not_kept_does_not_verify(redis):
    game_id = FIXTURE["game_id"]
    entries = [(i.encode(), bytes.fromhex(raw)) for i, raw in FIXTURE["entries"]]
    envelopes, commands = stored_envelopes(game_id, entries), {}
    stored_envelopes(game_id, entries, commands=commands)
    record = records.Record(header=records.RecordHeader(
        game_id=game_id, game="yspahan", title="old", seats=2, options={}, players=("p0", "p1"), status="over",
        created_at=0.0, ended_at=0.0, events=len(envelopes), head=envelopes[-1].hash),
        seed=FIXTURE["seed"], seed_hash=json.loads(bytes(envelopes[0].payload))["seed_hash"], events=tuple(envelopes),
        commands=records.recorded_commands("yspahan", envelopes, commands) or None)
    verdict = verify_record(record)
    assert not verdict.ok and verdict.first_difference == 1
    assert verdict.problems[0] == ("event 1 (table.GameCreated) came from no command of the record (the record "
                                   "holds no commands: it was written before Souk kept them)")


def test_a_stream_read_from_its_middle_needs_the_games_name():
    from services.engine.sealing import seal_events

    table = tbl.EMPTY
    for command in list(commands_of_random_games("yspahan", 1))[:3]:  # created, both seats taken: the setup
        decided = tbl.decide(table, None, None, command, Chance(bytes(32), table.version))
        sealed = seal_events(table, decided, game_id="g", command_id="c", seat=None, recorded_at=1.0,
                             head="0" * 64, seed=bytes(32))
        table = sealed.table
    game_entry = next(s for e, s in zip(sealed.envelopes, sealed.stored) if not e.type.startswith("table."))
    with pytest.raises(ValueError, match="needs the game's name"):
        stored_envelopes("g", [(b"9-0", game_entry)])
