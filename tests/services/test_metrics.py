"""Metrics (prometheus-client): commands by outcome and game, the latency to the views, the streams' backlog,
and a worker's own metrics endpoint."""

from __future__ import annotations

import asyncio

import httpx
import msgspec
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from services.store import keys
from services.runtime import metrics
from services.engine.service import Engine
from services.projector.service import Projector
from services.store.events import RedisEventStore
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_commands_are_counted_by_game_and_outcome_once_and_their_latency_observed(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    accepted = value("souk_commands_total", game="tally", outcome="accepted", code="")
    refused = value("souk_commands_total", game="tally", outcome="rejected", code="not_your_turn")
    missing = value("souk_commands_total", game="none", outcome="rejected", code="game_not_found")
    observed = value("souk_command_latency_seconds_count", game="tally")
    within_30s = value("souk_command_latency_seconds_bucket", game="tally", le="30.0")
    turn = await started(engine)
    late = msgspec.structs.replace(cmd("g1", Add(1), seat=turn, token=th(turn), cid="a"), sent_at=1.0)
    wrong = cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="b")
    replies = await engine.handle([wrong, late, cmd("nope", Add(1), seat=0, cid="c")])
    assert [r.status for r in replies] == ["rejected", "accepted", "rejected"]
    assert await engine.handle([wrong, late]) == replies[:2]  # resent: answered from the record, not counted again
    assert value("souk_commands_total", game="tally", outcome="accepted", code="") == accepted + 4  # create, joins, add
    assert value("souk_commands_total", game="tally", outcome="rejected", code="not_your_turn") == refused + 1
    assert value("souk_commands_total", game="none", outcome="rejected", code="game_not_found") == missing + 1
    projector = Projector(redis, store)
    await projector.handle([fields for _, fields in await redis.xrange(keys.events(0))])
    # sent_at is set only on "a" (the others were sent without one): one observation, from 1970
    assert value("souk_command_latency_seconds_count", game="tally") == observed + 1
    assert value("souk_command_latency_seconds_bucket", game="tally", le="30.0") == within_30s  # it took decades
    before = value("souk_command_latency_seconds_count", game="tally")
    await projector.rebuild()  # projecting old events again measures nothing
    assert value("souk_command_latency_seconds_count", game="tally") == before
    await projector.aclose()


async def test_the_backlog_is_read_from_redis_and_a_slow_reading_keeps_the_last_one(redis, monkeypatch):
    engine = Engine(redis, RedisEventStore(redis))
    from services.store.streams import ensure_group

    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await redis.xadd(keys.commands(0), {"c": b"{}"})
    await redis.xadd(keys.commands(0), {"c": b"{}"})
    await redis.xreadgroup(keys.ENGINE_GROUP, "c1", {keys.commands(0): ">"}, count=1)
    await engine.park(None, "envelope_unreadable", "test", raw=b"x")
    backlog = metrics.Backlog()
    assert list(backlog.collect()) == []  # nothing read yet: nothing reported
    assert await backlog.refresh(redis)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for m in backlog.collect() for s in m.samples}
    group = (("group", "engine"), ("stream", keys.commands(0)))
    assert samples[("souk_stream_length", (("stream", keys.commands(0)),))] == 2
    assert samples[("souk_consumer_group_pending", group)] == 1
    if ("souk_consumer_group_lag", group) in samples:  # Redis 7+
        assert samples[("souk_consumer_group_lag", group)] == 1
    assert samples[("souk_parked_commands", ())] == 1
    assert samples[("souk_backlog_age_seconds", ())] < 1

    async def slow(_redis):
        await asyncio.sleep(5)

    monkeypatch.setattr(metrics.Backlog, "_read", staticmethod(slow))
    failures = value("souk_backlog_refresh_failures_total")
    started_at = asyncio.get_running_loop().time()
    assert not await backlog.refresh(redis, timeout=0.2)
    assert asyncio.get_running_loop().time() - started_at < 1
    assert value("souk_backlog_refresh_failures_total") == failures + 1
    again = {(s.name, tuple(sorted(s.labels.items()))): s.value for m in backlog.collect() for s in m.samples}
    assert again[("souk_consumer_group_pending", group)] == 1  # the last reading stays


async def test_a_worker_serves_its_metrics_on_its_own_port(redis):
    server = metrics.Server(redis, "127.0.0.1", 0)
    await server.start()
    try:
        async with httpx.AsyncClient() as client:
            response = await client.get(f"http://127.0.0.1:{server.port}/metrics")
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
        names = {f.name for f in text_string_to_metric_families(response.text)}
        assert {"souk_commands", "souk_command_latency_seconds", "souk_stream_length", "souk_parked_commands",
                "souk_websockets_open"} <= names
    finally:
        await server.stop()
