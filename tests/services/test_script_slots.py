"""Every Lua script Souk runs on the event store declares its keys (KEYS) and they hash to one Redis Cluster slot
for each call: a game's keys and its partition's keys carry the partition's hash tag (``keys.tag``). Checked with
redis-py's ``key_slot`` over the calls the services make while a game is played with four partitions."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from contracts.api import WebhookNotice
from services.clock import ClockWorker, Takeover
from services.engine.service import Engine
from services.store import keys
from services.store.events import RedisEventStore
from services.store.resp import Resp
from services.store.streams import ensure_group, trim_read
from services.webhooks import outbox, registry
from services.webhooks.outbox import Delivery
from tests.services.tally import Add
from tests.services.test_clock_worker import cmd, started, th, wait_until

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]

# The event store's scripts: each call's keys in one slot (checked below).
EVENT_STORE = {"services/store/events.py:_APPEND", "services/clock/worker.py:_SEND",
               "services/clock/worker.py:_RESCHEDULE", "services/webhooks/outbox.py:_ENQUEUE",
               "services/webhooks/outbox.py:_CLAIM", "services/webhooks/outbox.py:_RETRY",
               "services/webhooks/registry.py:_REGISTER_LATER", "services/store/streams.py:_TRIM_READ"}
# The read store's and the gateway's: checked by tests/services/test_read_store_slots.py.
from tests.services.read_store_calls import READ_STORE, script_name  # noqa: E402


def scripts_in_services() -> dict[str, str]:
    """Every module-level Lua script in services/ (a string that calls redis.call), by 'path:NAME'; a part other
    scripts of its module are built from (the projector's ``_RUN``) is not one of its own: it is checked in them."""
    found = {}
    for path in sorted((ROOT / "services").rglob("*.py")):
        text = path.read_text()
        scripts = {target.id: node.value for node in ast.parse(text).body if isinstance(node, ast.Assign)
                   and "redis.call(" in (ast.get_source_segment(text, node.value) or "") for target in node.targets}
        parts = {n.id for value in scripts.values() for n in ast.walk(value) if isinstance(n, ast.Name)}
        for name, value in scripts.items():
            if name not in parts:
                found[f"{path.relative_to(ROOT)}:{name}"] = ast.get_source_segment(text, value)
    return found


def test_every_script_in_services_is_checked_here_or_with_the_read_stores():
    assert set(scripts_in_services()) == EVENT_STORE | READ_STORE


@pytest.fixture
def calls(monkeypatch) -> list[tuple[str, tuple]]:
    return record_calls(monkeypatch, aioredis.Redis)


def record_calls(monkeypatch, client: type) -> list[tuple[str, tuple]]:
    """Every EVAL/EVALSHA sent, by redis-py's ``client`` class (its ``Redis`` or its ``RedisCluster``) or the lean
    connection: (the script's SHA-1 or text, its keys)."""
    seen: list[tuple[str, tuple]] = []

    def record(args: tuple) -> None:
        name = args[0].upper() if isinstance(args[0], str) else args[0].decode().upper()
        if name in ("EVAL", "EVALSHA"):
            seen.append((args[1], tuple(args[3:3 + int(args[2])])))

    resp_send, execute = Resp._send, client.execute_command

    def send(self, args):
        record(args)
        return resp_send(self, args)

    async def execute_command(self, *args, **options):
        record(args)
        return await execute(self, *args, **options)

    monkeypatch.setattr(Resp, "_send", send)
    monkeypatch.setattr(client, "execute_command", execute_command)
    return seen


async def test_each_event_store_scripts_keys_hash_to_one_slot_in_every_call(redis, calls):
    keys.use(4)
    store = RedisEventStore(redis)
    engine = Engine(redis, store, acknowledge=keys.ENGINE_GROUP)
    games = [next(g for g in (f"g{n}" for n in range(100)) if keys.partition(g) == p) for p in (1, 3)]
    for game_id in games:  # the append (two partitions' batches)
        await started(engine, game_id, {"per_decision": 0.05, "on_timeout": "forfeit"})
    for p in keys.PARTITIONS:
        await ensure_group(redis, keys.commands(p), keys.ENGINE_GROUP)
        await ensure_group(redis, keys.events(p), keys.PROJECTOR_GROUP)
    for game_id in games:
        await redis.xadd(keys.commands(keys.partition(game_id)), {"c": b"x"})
    entries = [i for p in keys.PARTITIONS for _, batch in await redis.xreadgroup(
        keys.ENGINE_GROUP, "c", {keys.commands(p): ">"}) or [] for i, _ in batch]
    seat = (await engine.load(games[0])).table.state.turn
    await engine.handle([cmd(g, Add(1), seat=seat, token=th(seat), cid="a") for g in games],
                        entries)  # one batch over two partitions, acknowledged in each one's stream
    clock = ClockWorker(redis, store, retry_s=0.5, takeover=Takeover("greedy"))
    await wait_until(max([await store.deadline(g) for g in games]))
    assert await clock.fire_due() == 2  # the sends
    await clock._reschedule(keys=[keys.game_deadlines(games[0])], args=[games[0], "1", ""])
    game_id = games[1]
    await registry.register_later(redis, game_id, "game", registry.Registration("https://example.com/h", "s"))
    notice = WebhookNotice(f"{game_id}:1:turn:0", "turn", game_id, 1, 0, "tally", "t", time.time())
    delivery = Delivery(outbox.delivery_id(notice.key, "game"), game_id, "game", notice, time.time())
    position = int(await redis.get(keys.webhook_position(game_id)) or 0)
    assert await outbox.enqueue(redis, game_id, position, position + 1, [(delivery, time.time())], [])
    [(partition, due)] = await outbox.due(redis, time.time() + 1, 10)
    claimed = await outbox.claim(redis, partition, due, time.time() + 1, 5.0)
    await outbox.retry(redis, claimed, time.time() + 60)
    for p in keys.PARTITIONS:
        await trim_read(redis, keys.events(p))
    await store.aclose()

    seen = set()
    for script, script_keys in calls:
        name = script_name(script.decode() if isinstance(script, bytes) else script, EVENT_STORE)
        if name is None:
            continue
        seen.add(name)
        assert script_keys, f"{name} declares no key"
        assert len({key_slot(k.encode() if isinstance(k, str) else k) for k in script_keys}) == 1, (name, script_keys)
    assert seen == EVENT_STORE
