"""Clock workers owning partitions (issue #22): a ``Leases`` with no stream, whose partitions mean only the deadline
indexes its owner polls (a clock has no consumer group to claim from)."""

from __future__ import annotations

import pytest

from services.store import keys
from services.store.leases import Leases

pytestmark = pytest.mark.anyio


async def test_leases_without_a_stream_take_and_release_only_the_leases(four_partitions, redis):
    """No consumer group exists on any stream: taking a partition claims nothing, releasing one leaves no group
    behind, and a clean stop frees every lease and the heartbeat at once."""
    leases = Leases(redis, "clock", "clock-x", lease_ms=2000, stream=None)
    await leases.tick()
    assert sorted(leases.owned) == list(keys.PARTITIONS)
    assert leases.catching_up == set()
    for p in keys.PARTITIONS:
        assert await redis.get(keys.lease("clock", p)) in (b"clock-x", "clock-x")
        assert not await redis.exists(keys.commands(p))
    await leases.stop()
    assert leases.owned == {}
    for p in keys.PARTITIONS:
        assert not await redis.exists(keys.lease("clock", p))
    assert await redis.zrange(keys.members("clock"), 0, -1) == []
