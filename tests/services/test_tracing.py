"""Trace context (W3C traceparent): continued or started by the gateway, carried by the command into every event it
appends (outside the hash chain), and bound as ``trace_id`` in the engine's and the projector's log lines."""

from __future__ import annotations

import hashlib
import logging

import msgspec
import pytest
import structlog

from contracts.envelope import EventEnvelope, chain_hash, seal
from services.store import keys
from services.runtime import logs, tracing
from services.history.audit import verify_audit
from services.engine.service import Engine
from services.projector.service import Projector
from services.store.events import RedisEventStore
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


@pytest.fixture
def captured():
    """structlog's output as event dicts, context variables merged in, debug lines included."""
    capture = structlog.testing.LogCapture()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, logs.merge_context, capture],
                        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield capture.entries
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()
    logs.clear()


def traced(env, traceparent: str = TRACEPARENT):
    return msgspec.structs.replace(env, traceparent=traceparent)


def test_a_valid_traceparent_is_continued_with_a_new_parent_id_and_anything_else_starts_a_trace():
    hop = tracing.child(TRACEPARENT)
    assert hop.startswith(f"00-{TRACE}-") and hop.endswith("-01") and hop != TRACEPARENT
    assert tracing.parse(hop) == (TRACE, "01") and tracing.trace_id(hop) == TRACE
    assert tracing.parse(f"01-{TRACE}-00f067aa0ba902b7-00-future") == (TRACE, "00")  # a later version's extra field
    for bad in ("", "garbage", TRACEPARENT.upper(), f"ff-{TRACE}-00f067aa0ba902b7-01",
                f"00-{'0' * 32}-00f067aa0ba902b7-01", f"00-{TRACE}-{'0' * 16}-01", f"{TRACEPARENT}-extra", f"00-{TRACE[:-1]}-00f067aa0ba902b7-01"):
        fresh = tracing.child(bad)
        assert tracing.parse(fresh) is not None and tracing.trace_id(fresh) != TRACE, bad
    assert tracing.trace_id("") is None


async def test_the_traceparent_travels_into_every_event_and_stays_out_of_the_chain(redis):
    engine = Engine(redis, RedisEventStore(redis))
    turn = await started(engine)
    [reply] = await engine.handle([traced(cmd("g1", Add(2), seat=turn, token=th(turn), cid="traced"))])
    assert reply.status == "accepted"
    # souk:events carries it to the projectors; the game stream does not keep it (not part of the record)
    published = [msgspec.json.decode(f[b"e"], type=EventEnvelope) for _, f in await redis.xrange(keys.events(0))]
    assert [e.traceparent for e in published] == [""] * 5 + [TRACEPARENT]
    envelopes = await engine.store.read("g1")
    last = published[-1]
    assert chain_hash(last) == last.hash == chain_hash(msgspec.structs.replace(last, traceparent=""))
    assert seal(msgspec.structs.replace(last, traceparent="00-something-else")).hash == last.hash
    # an envelope stored before the field existed still decodes, and its JSON holds no empty field
    assert b"traceparent" not in msgspec.json.encode(envelopes[0])
    old = msgspec.json.decode(msgspec.json.encode(envelopes[0]), type=EventEnvelope)
    assert old.traceparent == "" and old.hash == chain_hash(old)
    # the record verifies as `souk verify` checks an audit: chain, commitments (the tally game's secrets), seed
    seed = "00ff" * 16
    audit = {"seed": seed, "seed_hash": hashlib.sha256(bytes.fromhex(seed)).hexdigest(),
             "events": [msgspec.json.decode(msgspec.json.encode(e)) for e in envelopes]}
    assert any(e.commitment for e in envelopes) and verify_audit(audit) == []


async def test_the_engine_and_the_projector_log_a_commands_trace_id(redis, captured):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    await engine.handle([traced(cmd("g1", Add(1), seat=turn, token=th(turn), cid="ok")),
                         traced(cmd("g1", Add(1), seat=turn, token=th(turn), cid="no"), other)])
    projector = Projector(redis, store)
    await projector.handle([fields for _, fields in await redis.xrange(keys.events(0))])
    await projector.aclose()
    by_event = {}
    for entry in captured:
        by_event.setdefault(entry["event"], []).append(entry)
    [accepted] = [e for e in by_event["command_accepted"] if e["command_id"] == "ok"]
    assert accepted["trace_id"] == TRACE and accepted["game_id"] == "g1" and accepted["seat"] == turn
    [rejected] = by_event["command_rejected"]
    assert rejected["trace_id"] == "0af7651916cd43dd8448eb211c80319c" and rejected["code"] == "not_your_turn"
    [projected] = [e for e in by_event["command_projected"] if e["command_id"] == "ok"]
    assert projected["trace_id"] == TRACE and projected["game_id"] == "g1" and projected["version"] == 6
    assert all(e["trace_id"] is None for e in by_event["command_projected"] if e["command_id"] != "ok")
