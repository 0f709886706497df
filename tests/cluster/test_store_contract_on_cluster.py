"""The event store's contract (tests/services/test_store_contract.py) on a Redis Cluster, through the services'
own clients (services/store/clients.py: redis-py's cluster client, and the lean connection routed by slot) with
four partitions over the three primaries: append, read, conflicts, idempotency, each test of the contract as it
is."""

from __future__ import annotations

import inspect

import pytest

from services.store import clients, keys
from services.store.events import RedisEventStore
from services.store.resp import ClusterResp
from tests.services import test_store_contract as contract

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

# every test of the contract that takes the ``store`` fixture, run here with the cluster's
for _name, _test in vars(contract).items():
    if _name.startswith("test_") and "store" in inspect.signature(_test).parameters:
        globals()[_name] = _test


@pytest.fixture
async def store(redis_cluster):
    keys.use(4)
    for node in redis_cluster.primaries():
        node.ask("FLUSHALL")
    url = "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in redis_cluster.addresses())
    client = clients.async_client(url)
    store = RedisEventStore(client)
    assert isinstance(store.lean, ClusterResp)
    yield store
    await store.aclose()
    await client.aclose()


async def test_the_contracts_games_are_spread_over_several_primaries(store, redis_cluster):
    appended = [contract.append(f"g{i}", 0, 1, contract.GENESIS_HASH, "k") for i in range(12)]
    assert {r.status for r in await store.append(appended)} == {contract.OK}
    assert len({keys.partition(f"g{i}") for i in range(12)}) > 1
    holders = [node.port for node in redis_cluster.primaries()
               if any(True for _ in node.client().scan_iter(match="souk:{p*}:game:*"))]
    assert len(holders) > 1, holders
