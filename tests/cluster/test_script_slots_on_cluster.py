"""tests/services/test_script_slots.py's game on a Redis Cluster, through the services' own clients
(services/store/clients.py): every event-store script, transaction and command the engine, the clock worker, the
webhooks and the upkeep send there is routed by slot (the lean connection's ``ClusterResp``, redis-py's cluster
client), and the cluster itself refuses any whose keys span slots (CROSSSLOT), so this is the check with the real
server. The refusals' forgetting (one MULTI per partition) is run here too."""

from __future__ import annotations

import pytest
from redis.asyncio.cluster import RedisCluster

from contracts.envelope import GENESIS_HASH
from services.store import clients, keys
from services.store.events import OK, Append, RedisEventStore
from services.store.resp import ClusterResp
from tests.services import test_script_slots as slots

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]


@pytest.fixture(autouse=True)
def tally_game():
    """The test-only game 'tally' the services' tests play (tests/services/conftest.py)."""
    from domain import kernel
    from tests.services import tally

    kernel._GAMES["tally"] = tally.GAME
    yield tally.GAME
    kernel._GAMES.pop("tally", None)


@pytest.fixture
async def redis(redis_cluster):
    for node in redis_cluster.primaries():
        node.ask("FLUSHALL")
    client = clients.async_client("redis+cluster://" + ",".join(f"{h}:{p}" for h, p in redis_cluster.addresses()))
    yield client
    await client.aclose()


@pytest.fixture
def calls(monkeypatch) -> list[tuple[str, tuple]]:
    """``slots.calls``, with redis-py's cluster client's commands recorded."""
    return slots.record_calls(monkeypatch, RedisCluster)


async def test_each_event_store_scripts_keys_hash_to_one_slot_in_every_call_on_a_cluster(redis, calls):
    assert isinstance(RedisEventStore(redis).lean, ClusterResp)
    await slots.test_each_event_store_scripts_keys_hash_to_one_slot_in_every_call(redis, calls)


async def test_the_refusals_of_several_partitions_are_forgotten_on_a_cluster(redis):
    keys.use(4)
    store = RedisEventStore(redis, refusal_ttl_s=1)
    games = [next(g for g in (f"r{n}" for n in range(100)) if keys.partition(g) == p) for p in keys.PARTITIONS]
    refused = [Append(g, "test", 0, (), "0:k", b'{"status":"rejected"}', prev_hash=GENESIS_HASH) for g in games]
    assert [r.status for r in await store.append(refused)] == [OK] * 4
    assert await store.forget_refusals(now=10 ** 10) == 4
    assert [await store.outcome(g, "0:k") for g in games] == [None] * 4
    await store.aclose()
