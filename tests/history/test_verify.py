"""A record re-run by the rules: a played game verifies; a record edited anywhere fails, naming the first event that
differs (issue #10 section 4)."""

from __future__ import annotations

import json

import msgspec
import pytest

from contracts.envelope import GENESIS_HASH, EventEnvelope, chain_hash
from services.history import record as records
from services.history.verify import RULES_DIFFER, verify_record
from services.store import keys
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio


_played: dict[str, bytes] = {}  # one finished game's record, played once for the module (a record is plain data)


@pytest.fixture
async def played(redis_url) -> records.Record:
    """The record of a finished two-player Yspahan game, played through the engine and projected."""
    if "record" not in _played:
        import random

        import redis.asyncio as aioredis

        from services.bench.storage import play
        from services.engine.service import Engine
        from services.projector.service import Projector

        events = aioredis.Redis.from_url(redis_url)
        engine = Engine(events, RedisEventStore(events))
        projector = Projector(events, engine.store)
        try:
            [game_id] = await play(engine, projector, events, "yspahan", 2, 1, random.Random(5))
            _played["record"] = records.encode(await record_of(events, game_id))
        finally:
            await projector.aclose()
            await engine.store.aclose()
            await events.aclose()
    return records.decode(_played["record"])


async def record_of(events, game_id: str) -> records.Record:
    store = RedisEventStore(events)
    try:
        envelopes, commands = await store.read_with_commands(game_id)
        return records.make(game_id, envelopes, await events.get(keys.seed(game_id)), commands=commands)
    finally:
        await store.aclose()


def edited(record: records.Record, change, rehash: bool = False) -> records.Record:
    """The record with its JSON edited by ``change``; ``rehash``: the hash chain and the header's head made to
    hold again afterwards, as a forger would (then only the re-run can tell)."""
    document = json.loads(records.encode(record))
    change(document)
    if rehash:
        prev = GENESIS_HASH
        for i, raw in enumerate(document["events"]):
            env = msgspec.json.decode(json.dumps(raw, separators=(",", ":")).encode(), type=EventEnvelope)
            env = msgspec.structs.replace(env, seq=i + 1, prev_hash=prev)
            raw.update(seq=i + 1, prev_hash=prev, hash=chain_hash(env))
            prev = raw["hash"]
        document["header"].update(events=len(document["events"]), head=prev)
    return records.decode(json.dumps(document, separators=(",", ":")).encode())


def _first(document, kind: str) -> int:
    return next(i for i, e in enumerate(document["events"]) if e["type"] == kind)


def _die(document):
    rolled = document["events"][_first(document, "yspahan.DiceRolled")]
    rolled["payload"]["white"][0] = rolled["payload"]["white"][0] % 6 + 1


def _swap_commands(document):
    commands = document["commands"]
    i = next(i for i in range(10, len(commands) - 1) if commands[i]["seat"] != commands[i + 1]["seat"])
    commands[i], commands[i + 1] = commands[i + 1], commands[i]


def _swap_renumbered(document):
    """Two commands of different seats swapped, each taking the other's place (its version) too."""
    commands = document["commands"]
    i = next(i for i in range(10, len(commands) - 1) if commands[i]["seat"] != commands[i + 1]["seat"])
    first, second = commands[i], commands[i + 1]
    first["version"], second["version"] = second["version"], first["version"]
    commands[i], commands[i + 1] = second, first


def _drop_event(document):
    document["events"].pop(_first(document, "yspahan.CubePlaced"))


async def test_a_played_game_verifies_with_every_command_re_run(played):
    record = played
    assert record.commands is not None and record.commands[0].version == 0
    verdict = verify_record(records.decode(records.encode(record)))
    assert verdict.ok, verdict.problems
    assert verdict.events == verdict.rerun == record.header.events and verdict.commands == len(record.commands)
    assert verdict.summary().startswith(f"OK: {verdict.events} events and {verdict.commands} commands")


@pytest.mark.parametrize(("change", "rehash", "found"), [
    (_die, False, "yspahan.DiceRolled"),
    (_die, True, "differs from what the rules give"),
    (_drop_event, False, "prev_hash"),
    (_drop_event, True, "yspahan.CubePlaced"),
    (_swap_commands, False, "out of order"),
    (_swap_renumbered, False, "the rules"),
    (lambda d: d["events"][40].update(hash="ab" * 32), False, "hash"),
    (lambda d: d.update(seed="ab" * 32), False, "seed"),
    (lambda d: d["commands"].pop(20), False, "out of order"),
    (lambda d: d.update(commands=None), False, "holds no commands"),
])
async def test_a_record_edited_anywhere_fails_naming_the_first_event_that_differs(played, change, rehash, found):
    record = played
    verdict = verify_record(edited(record, change, rehash))
    assert not verdict.ok
    assert any(found in p for p in verdict.problems), verdict.problems
    assert verdict.first_difference is not None and verdict.first_difference <= verdict.events + 1


async def test_a_die_changed_and_hashed_again_is_named_by_the_re_run(played):
    record = played
    document = json.loads(records.encode(record))
    seq = _first(document, "yspahan.DiceRolled") + 1
    verdict = verify_record(edited(record, _die, rehash=True))
    assert verdict.first_difference == seq
    assert verdict.problems[0].startswith(f"event {seq} (yspahan.DiceRolled) differs from what the rules give")
    # what else is known: the chain holds, so the record was forged whole or played under earlier rules
    assert verdict.problems[1:] == (RULES_DIFFER,)



async def test_an_audit_whose_chance_was_not_the_committed_mix_does_not_verify(played):
    """``souk verify GAME_ID`` checks a server's audit: beyond its chain and its seed, the game's chance is the
    server's seed mixed with the seats' entropy, as GameStarted committed (a seat's entropy changed and the chain
    forged again: only the mix can tell)."""
    from services.history.audit import verify_audit

    def audit_of(record: records.Record) -> dict:
        document = json.loads(records.encode(record))
        return {"game_id": record.header.game_id, "seed": document["seed"], "seed_hash": document["seed_hash"],
                "events": document["events"]}

    assert verify_audit(audit_of(played)) == []

    def other_entropy(document):  # the forger knows the seed (it is public after the end): the commitment too
        from contracts.envelope import commitment

        joined = document["events"][_first(document, "table.SeatJoined")]
        joined["payload"]["entropy"] = "ab" * 32
        joined["commitment"] = commitment(bytes.fromhex(document["seed"]), joined["game_id"], joined["seq"],
                                          msgspec.json.encode(joined["payload"]))

    forged = verify_audit(audit_of(edited(played, other_entropy, rehash=True)))
    assert forged and "chance" in " ".join(forged), forged


async def test_an_import_the_event_store_refuses_leaves_no_seed_behind(played, redis_url, monkeypatch):
    """souk import sets the game's seed first (it also reserves the id), then appends the whole game in one script:
    when the store refuses the append, nothing of the game may stay (a seed without a game was left behind)."""
    import redis.asyncio as aioredis

    from services.history.transfer import import_record
    from services.store.events import CONFLICT, AppendResult

    async def refuse(self, appends):
        return [AppendResult(CONFLICT) for _ in appends]

    monkeypatch.setattr(RedisEventStore, "append", refuse)
    events = aioredis.Redis.from_url(redis_url)
    try:
        with pytest.raises(records.RecordError, match="refused"):
            await import_record(events, played, game_id="refused-import")
        assert await events.exists(keys.seed("refused-import")) == 0
        assert await events.exists(keys.game_stream("refused-import")) == 0
    finally:
        await events.aclose()


# --- the header (issue #18 item 10): every field the events determine is checked against them ----------------

def _header(**fields):
    return lambda d: d["header"].update(fields)


HEADER_FORGERIES = {
    "title": _header(title="the final of the world cup"),
    "players": _header(players=["mallory", "eve"]),
    "unfair": _header(unfair=True),
    "created_at": _header(created_at=946_684_800.0),
    "ended_at": _header(ended_at=946_684_900.0),
    "imported_from": _header(imported_from="someone-elses"),
    "rematch_of": _header(rematch_of="a-famous-game"),
    "game": _header(game="istanbul"),
    "seats": _header(seats=4),
    "options": _header(options={"anything": True}),
    "forked_from": _header(forked_from={"game_id": "elsewhere", "version": 12}),
}


@pytest.mark.parametrize("field", sorted(HEADER_FORGERIES))
async def test_a_header_that_lies_about_what_the_events_say_does_not_verify(played, field):
    verdict = verify_record(edited(played, HEADER_FORGERIES[field]))
    assert not verdict.ok
    assert any(p.startswith(f"the header's {field} ") for p in verdict.problems), verdict.problems


async def test_the_verdict_names_the_header_fields_the_events_cannot_determine(played):
    verdict = verify_record(edited(played, _header(archived_at=1.0)))
    assert verdict.ok, verdict.problems  # an archiving time is the operator's word: not checked, said so
    assert verdict.unverified == ("archived_at",)
    assert verdict.to_builtins()["unverified"] == ["archived_at"]
    assert set(records.UNVERIFIED) | set(records.CHECKED) == set(records.RecordHeader.__struct_fields__)


async def test_a_record_whose_header_lies_is_not_imported(played, redis_url):
    import redis.asyncio as aioredis

    from services.history.transfer import import_record

    events = aioredis.Redis.from_url(redis_url)
    try:
        before = await events.zcard(keys.games(0))
        for field in ("title", "players", "unfair", "created_at", "imported_from", "rematch_of"):
            with pytest.raises(records.RecordError, match=f"the header's {field} "):
                await import_record(events, edited(played, HEADER_FORGERIES[field]), game_id=f"forged-{field}")
            assert not await events.exists(keys.seed(f"forged-{field}"))
        assert await events.zcard(keys.games(0)) == before
    finally:
        await events.aclose()
