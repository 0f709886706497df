"""The chaos checks catch what they claim to: a game played through the real engine passes them, and each kind of
damage done to its record or to the driver's ledger is reported under its own name."""

from __future__ import annotations

import hashlib
import json
import random

import msgspec
import pytest
import redis.asyncio as aioredis

from contracts.envelope import CommandEnvelope, EventEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import get_game
from services.store import keys
from services.store.codec import encoder
from services.engine.service import Engine
from services.embedded.redis import RedisServer
from services.reliability.checks import Problems, _chain, _match_ledger, _redecide, _stream, groups_of
from services.reliability.driver import CreateTry, JoinTry, Ledger, Sent
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio
GAME = "g1"


def _canonical(reply) -> str:
    return json.dumps(msgspec.to_builtins(reply), sort_keys=True)


@pytest.fixture
async def played(tmp_path):
    """A Samarkand game of 3 seats, created, joined and played 30 commands into through the engine, as the
    gateway would send them; and the ledger a driver would have kept of it."""
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    redis = aioredis.Redis.from_url(server.url)
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    ledger = Ledger()
    rng = random.Random(7)
    try:
        ledger.creates["t"] = CreateTry("t", "samarkand", 3, None, game_id=GAME, creator_token="creator")
        create = CreateGame("samarkand", "t", 3, creator_hash=hashlib.sha256(b"creator").hexdigest())
        first = [CommandEnvelope("create", GAME, msgspec.Raw(encoder.encode(create)))]
        for seat in range(3):
            token = f"token-{seat}"
            ledger.tokens[(GAME, seat)] = token
            ledger.joins[(GAME, f"p{seat}")] = JoinTry(GAME, seat, f"p{seat}", token=token)
            body = JoinSeat(f"p{seat}", hashlib.sha256(token.encode()).hexdigest(), seat)
            first.append(CommandEnvelope(f"join-{seat}", GAME, msgspec.Raw(encoder.encode(body)), seat=seat))
        assert {r.status for r in await engine.handle(first)} == {"accepted"}
        for n in range(30):
            table = (await engine.load(GAME)).table
            seat = rng.choice(tbl.flow(table).awaiting)
            command = rng.choice(get_game("samarkand").legal_commands(table.state, seat))
            hashed = hashlib.sha256(f"token-{seat}".encode()).hexdigest()
            env = CommandEnvelope(f"c{n}", GAME, msgspec.Raw(encoder.encode(command)), seat=seat, token_hash=hashed)
            [reply] = await engine.handle([env])
            ledger.commands[(GAME, seat, f"c{n}")] = Sent(GAME, seat, f"c{n}", msgspec.to_builtins(command),
                                                         answers=[(200, _canonical(reply))])
        problems = Problems()
        envelopes = await _stream(redis, GAME, problems)
        yield envelopes, await redis.get(keys.seed(GAME)), ledger, problems
    finally:
        await store.aclose()
        await redis.aclose()
        server.stop()


def _checked(envelopes: list[EventEnvelope], seed: bytes, ledger: Ledger, problems: Problems) -> dict[str, int]:
    _match_ledger(ledger, {GAME: envelopes}, problems, {})
    _chain(GAME, envelopes, seed, problems)
    _redecide(GAME, envelopes, seed, ledger, problems)
    return dict(problems.counts)


async def test_a_game_played_through_the_engine_passes_every_check(played):
    envelopes, seed, ledger, problems = played
    assert len(groups_of(envelopes)) == 1 + 3 + 30
    assert _checked(envelopes, seed, ledger, problems) == {}


async def test_an_accepted_command_missing_from_the_stream_is_lost(played):
    envelopes, seed, ledger, problems = played
    last = groups_of(envelopes)[-1]
    kept = envelopes[:-len(last.envelopes)]
    counts = _checked(kept, seed, ledger, problems)
    assert counts["lost"] == 1


async def test_a_command_appended_twice_is_duplicated(played):
    envelopes, seed, ledger, problems = played
    again = groups_of(envelopes)[-1].envelopes
    copies = [msgspec.structs.replace(e, seq=len(envelopes) + i + 1, recorded_at=e.recorded_at + 1)
              for i, e in enumerate(again)]
    assert _checked(envelopes + copies, seed, ledger, problems)["duplicated"] == 1


async def test_events_appended_beyond_an_accepted_answer_are_a_wrong_answer(played):
    envelopes, seed, ledger, problems = played
    again = groups_of(envelopes)[-1].envelopes
    copies = [msgspec.structs.replace(e, seq=len(envelopes) + i + 1) for i, e in enumerate(again)]
    assert _checked(envelopes + copies, seed, ledger, problems)["wrong_answer"] == 1


async def test_two_answers_to_one_command_id_conflict(played):
    envelopes, seed, ledger, problems = played
    sent = next(iter(ledger.commands.values()))
    sent.answers.append((422, json.dumps({"code": "not_your_turn", "message": "m"})))
    assert _checked(envelopes, seed, ledger, problems)["conflicting"] == 1


async def test_a_command_answered_refused_but_stored_conflicts(played):
    envelopes, seed, ledger, problems = played
    sent = next(iter(ledger.commands.values()))
    sent.answers[0] = (422, json.dumps({"code": "not_your_turn", "message": "m"}))
    assert _checked(envelopes, seed, ledger, problems)["conflicting"] == 1


async def test_a_command_nobody_sent_is_unknown(played):
    envelopes, seed, ledger, problems = played
    del ledger.commands[next(iter(ledger.commands))]
    counts = _checked(envelopes, seed, ledger, problems)
    assert counts["unknown"] == 1


async def test_a_payload_changed_in_the_store_fails_the_chain_and_the_re_decision(played):
    envelopes, seed, ledger, problems = played
    i = next(i for i, e in enumerate(envelopes) if e.type.startswith("samarkand.") and e.seq > 20
             and any(d in bytes(e.payload) for d in b"0123456789"))
    payload = bytes(envelopes[i].payload)
    digit = next(d for d in b"0123456789" if d in payload)
    changed = payload.replace(bytes([digit]), bytes([b"1"[0] if digit != b"1"[0] else b"2"[0]]), 1)
    assert changed != payload
    envelopes[i] = msgspec.structs.replace(envelopes[i], payload=msgspec.Raw(changed))
    counts = _checked(envelopes, seed, ledger, problems)
    assert counts["redecision"] >= 1 and counts["chain"] >= 1


async def test_a_wrong_seed_fails_the_chain(played):
    envelopes, _, ledger, problems = played
    counts = _checked(envelopes, b"\x00" * 32, ledger, problems)
    assert counts["chain"] >= 1 and counts["redecision"] >= 1
