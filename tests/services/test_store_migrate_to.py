"""`souk store migrate --to URL` (issue #22): an event store of one Redis copied into another Redis with another
number of partitions (here P = 1 -> 4; tests/cluster/test_migrate_to_cluster.py: onto a Redis Cluster), its games
going on there under `souk serve`; a migration cut half way refused as a store and run again; bad input refused with
its code, the source never written."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest
import redis as sync_redis
import redis.asyncio as aioredis

from contracts.api import WebhookNotice
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import bot_command, games
from services.cli import migration
from services.cli.stores import MIGRATION, ROLE, StoreError, check
from services.engine.service import Engine
from services.gateway.auth import token_hash
from services.history.audit import verify_game
from services.runtime.config import Settings
from services.store import keys
from services.store.codec import encoder
from services.store.events import RedisEventStore
from services.store.streams import ensure_group
from services.webhooks import outbox
from tests.cli.test_stores import one_line_refusal
from tests.cluster.test_souk_on_cluster import play
from tests.e2e.support import NO_LIMITS, serve
from tests.embedded.support import clean_env, souk
from tests.history.test_fork import envelope

pytestmark = pytest.mark.anyio


def database(url: str, db: int) -> str:
    """Database ``db`` of the test Redis, emptied."""
    url = url.rsplit("/", 1)[0] + f"/{db}"
    with sync_redis.Redis.from_url(url) as client:
        client.flushdb()
    return url


async def played(engine: Engine, rng: random.Random, moves: int = 6) -> dict[str, list[str]]:
    """A game of every built-in title, created, seated and ``moves`` random legal commands in; by game id, its seats'
    tokens (each seat joined with its token's hash, as the gateway does, so the tokens play on over HTTP)."""
    tokens: dict[str, list[str]] = {}
    for name in sorted(n for n in games() if n != "tally"):  # tally is the tests' own: `souk serve` knows it not
        seats = games()[name].min_seats
        game_id = f"moved-{name}"
        raw = [f"{game_id}-seat-{s}" for s in range(seats)]
        replies = await engine.handle([envelope(game_id, CreateGame(name, f"{name}, moved", seats))]
                                      + [envelope(game_id, JoinSeat(f"p{s}", token_hash(raw[s]), s,
                                                                    entropy=rng.randbytes(32).hex()))
                                         for s in range(seats)])
        assert [r.status for r in replies] == ["accepted"] * (seats + 1), replies
        for _ in range(moves):
            table = (await engine.load(game_id)).table
            seat = rng.choice(tbl.flow(table).awaiting)
            [reply] = await engine.handle([envelope(game_id, bot_command(tbl.game_of(table), table.state, seat, rng),
                                                    seat, token_hash(raw[seat]))])
            assert reply.status == "accepted", reply
        tokens[game_id] = raw
    return tokens


async def with_streams_half_read(redis: aioredis.Redis, engine: Engine, game_id: str, tokens: list[str]) -> int:
    """The source's streams as stopped services leave them: the engine's group has answered one command and has one
    queued for ``game_id`` (a legal one, not yet read); the projector's group has read and acknowledged the first
    half of the events, the rest not yet. Returns the events not yet read."""
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await redis.xadd(keys.commands(0), {"c": b"answered already"})
    await redis.xreadgroup(keys.ENGINE_GROUP, "engine-1", {keys.commands(0): ">"})
    await redis.xack(keys.commands(0), keys.ENGINE_GROUP, *[i for i, _ in await redis.xrange(keys.commands(0))])
    table = (await engine.load(game_id)).table
    seat = tbl.flow(table).awaiting[0]
    queued = envelope(game_id, bot_command(tbl.game_of(table), table.state, seat, random.Random(1)), seat,
                      token_hash(tokens[seat]))
    await redis.xadd(keys.commands(0), {"c": encoder.encode(queued)})
    await ensure_group(redis, keys.events(0), keys.PROJECTOR_GROUP)
    total = await redis.xlen(keys.events(0))
    [[_, read]] = await redis.xreadgroup(keys.PROJECTOR_GROUP, "projector-1", {keys.events(0): ">"}, count=total // 2)
    await redis.xack(keys.events(0), keys.PROJECTOR_GROUP, *[i for i, _ in read])
    for stream, group, consumer in ((keys.commands(0), keys.ENGINE_GROUP, "engine-1"),
                                    (keys.events(0), keys.PROJECTOR_GROUP, "projector-1")):
        await redis.xgroup_delconsumer(stream, group, consumer)  # stopped services: no consumer read just now
    return total - len(read)


def dumped(url: str) -> dict[bytes, bytes]:
    """Every key of a store with its DUMP: equal before and after, the store was not written."""
    with sync_redis.Redis.from_url(url) as client:
        return {k: client.dump(k) for k in sorted(client.scan_iter(count=1000))}


async def plays_on(url: str, tokens: dict[str, list[str]], versions: dict[str, int], rng: random.Random) -> None:
    """On `souk serve` of the migrated store: once the projector has rebuilt a game's views, a legal command of each
    game is accepted past its version before the migration, and its history's chain holds."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        for game_id, seat_tokens in tokens.items():
            for _ in range(300):  # the projector rebuilds the new read store as it starts
                view = await client.get(f"/games/{game_id}/view")
                if view.status_code == 200 and view.json()["version"] >= versions[game_id]:
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"{game_id}: not projected on the new store: {view.text}")
            accepted: list[tuple[str, int]] = []
            await play(client, game_id, seat_tokens, rng, 1, accepted)
            assert accepted and accepted[0][1] > versions[game_id], accepted
            what, problems = await asyncio.to_thread(verify_game, url, game_id)
            assert problems == [], (game_id, what, problems)


async def test_a_store_of_one_partition_moves_to_four_and_souk_plays_on_there(redis, redis_url, tmp_path):
    check(Settings(redis_url=redis_url), views=False)  # a store of one partition, made as a service makes it
    rng = random.Random(22)
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    tokens = await played(engine, rng)
    queued_game = sorted(tokens)[0]
    unread = await with_streams_half_read(redis, engine, queued_game, tokens[queued_game])
    before = {g: await store.read(g) for g in tokens}
    streams = {g: await redis.xrange(keys.game_stream(g)) for g in tokens}
    source = dumped(redis_url)
    target = database(redis_url, 2)

    done = souk("store", "migrate", "--to", target, env=clean_env(REDIS_URL=redis_url, SOUK_PARTITIONS="4"))

    assert done.returncode == 0, done.stderr
    assert f"{len(tokens)} games" in done.stdout and "1 partition -> 4" in done.stdout, done.stdout
    assert "1 command" in done.stdout and f"{unread} events" in done.stdout, done.stdout
    assert dumped(redis_url) == source  # the source only read
    moved = sync_redis.Redis.from_url(target)
    assert moved.hget(ROLE, "partitions") == b"4" and not moved.exists(MIGRATION)
    keys.use(4)
    assert len({keys.partition(g) for g in tokens}) > 1  # the games now in several partitions
    for game_id in tokens:  # each game's keys under its partition's name, its stream whole
        assert moved.xrange(keys.game_stream(game_id)) == streams[game_id]
        assert moved.get(keys.head(game_id)) == before[game_id][-1].hash.encode()
    [(_, queued)] = moved.xrange(keys.commands(keys.partition(queued_game)))  # the acknowledged command is not
    assert queued_game.encode() in queued[b"c"]
    assert sum(moved.xlen(keys.events(p)) for p in keys.PARTITIONS) == unread
    assert {g["name"] for p in keys.PARTITIONS for g in moved.xinfo_groups(keys.events(p))} == {b"projector"}

    versions = {g: len(e) for g, e in before.items()}
    with serve(target, database(redis_url, 3), tmp_path / "souk.log", NO_LIMITS) as url:
        events = RedisEventStore(aioredis.Redis.from_url(target))
        for _ in range(300):  # the engine reads on: the queued command is decided
            if await events.version(queued_game) > versions[queued_game]:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the queued command was not decided on the new store")
        versions[queued_game] = await events.version(queued_game)
        await plays_on(url, tokens, versions, rng)
        for game_id, old in before.items():
            assert (await events.read(game_id))[:len(old)] == old
        await events.aclose()


async def test_a_migration_cut_half_way_is_refused_as_a_store_and_run_again(redis, redis_url, monkeypatch):
    old_views = database(redis_url, 1)
    check(Settings(redis_url=redis_url, views_redis_url=old_views))  # the source with a read store of its own
    tokens = await played(Engine(redis, RedisEventStore(redis)), random.Random(5), moves=2)
    target = database(redis_url, 2)

    def cut(*_args, **_kwargs):
        raise KeyboardInterrupt  # the operator's ^C, after the keys were copied and before the role hash

    monkeypatch.setattr(migration, "verified", cut)
    with pytest.raises(KeyboardInterrupt):
        migration.migrate_to(Settings(redis_url=redis_url, partitions=3), target)
    monkeypatch.undo()
    moved = sync_redis.Redis.from_url(target)
    assert moved.exists(MIGRATION) and not moved.exists(ROLE) and moved.dbsize() > 1
    with pytest.raises(StoreError) as refused:
        check(Settings(redis_url=target), views=False)
    assert refused.value.code == "migration_unfinished"
    assert "migration_unfinished" in one_line_refusal(souk("engine", env=clean_env(REDIS_URL=target)))
    assert not moved.exists(ROLE)  # the refused service recorded nothing

    summary = migration.migrate_to(Settings(redis_url=redis_url, partitions=3), target)

    assert summary is not None and summary.games == len(tokens)
    assert moved.hget(ROLE, "partitions") == b"3" and not moved.exists(MIGRATION)
    with pytest.raises(StoreError) as refused:  # the source's read store holds its games under 1 partition
        check(Settings(redis_url=target, views_redis_url=old_views))
    assert refused.value.code == "read_store_of_source"
    check(Settings(redis_url=target, views_redis_url=database(redis_url, 3)))  # an empty one: rebuilt
    assert migration.migrate_to(Settings(redis_url=redis_url, partitions=3), target) is None  # done: nothing to do
    again = souk("store", "migrate", "--to", target, env=clean_env(REDIS_URL=redis_url, SOUK_PARTITIONS="3"))
    assert again.returncode == 0 and "migrated already" in again.stdout, again.stderr


async def test_bad_migrations_are_refused_with_their_codes_and_write_nothing(redis, redis_url):
    check(Settings(redis_url=redis_url), views=False)
    await played(Engine(redis, RedisEventStore(redis)), random.Random(9), moves=1)
    target = database(redis_url, 2)
    env = clean_env(REDIS_URL=redis_url, SOUK_PARTITIONS="2")

    def refused(*args: str, **extra: str) -> str:
        return one_line_refusal(souk("store", "migrate", *args, env={**env, **extra}))

    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await redis.xadd(keys.commands(0), {"c": b"a command"})
    await redis.xreadgroup(keys.ENGINE_GROUP, "engine-1", {keys.commands(0): ">"})  # a running engine
    source = dumped(redis_url)
    line = refused("--to", target)
    assert "services_running" in line and "engine-1" in line and dumped(redis_url) == source
    await redis.xgroup_delconsumer(keys.commands(0), keys.ENGINE_GROUP, "engine-1")  # stopped
    source = dumped(redis_url)
    assert "same_store" in refused("--to", redis_url)
    assert "same_store" in refused("--to", redis_url.replace("127.0.0.1", "localhost"))  # known by its id
    assert "bad_cluster_url" in refused("--to", "redis+cluster://")
    assert "bad_url" in refused("--to", "http://example.com")
    assert "bad_partitions" in refused("--to", target, SOUK_PARTITIONS="0")
    with sync_redis.Redis.from_url(target) as other:
        other.set("somebody:else", "1")
        assert "target_not_empty" in refused("--to", target)
        assert other.keys() == [b"somebody:else"]
        other.flushdb()
    assert dumped(redis_url) == source
    await redis.hdel(ROLE, "partitions")  # a store of the layout before partitions: migrated in place first
    assert "old_layout" in refused("--to", target)
    assert sync_redis.Redis.from_url(target).dbsize() == 0


async def test_the_webhooks_outbox_dead_letters_and_indexes_go_to_each_games_new_partition(redis, redis_url):
    check(Settings(redis_url=redis_url), views=False)
    games_ = [f"hooked-{n}" for n in range(12)]
    notices = [outbox.Delivery(f"{g}:3:your_turn:0|seat:x", g, "seat:x", WebhookNotice(
        f"{g}:3:your_turn:0", "your_turn", g, 3, 0, "yspahan", "t", 1.0), made_at=1.0) for g in games_]
    for delivery in notices:
        assert await outbox.enqueue(redis, delivery.game_id, 0, 3, [(delivery, 100.0)], [])
    await outbox.dead(redis, notices[0], "410 gone")
    await outbox.dead(redis, notices[1], "timeout")
    for g in games_:
        await redis.zadd(keys.games(0), {g: 1.0})
        await redis.zadd(keys.deadlines(0), {g: 50.0})
        await redis.zadd(keys.refusals(0), {f"{g}\nseat:cmd": 60.0})
    await redis.set(keys.TOKEN_SECRET, b"secret")
    target = database(redis_url, 2)

    summary = migration.migrate_to(Settings(redis_url=redis_url, partitions=4), target)

    assert summary is not None and summary.dead_letters == 2 and summary.global_keys == 1
    keys.use(4)
    moved = aioredis.Redis.from_url(target)
    assert len({keys.partition(g) for g in games_}) == 4
    for delivery in notices[2:]:  # each delivery still due, in its game's partition
        p = keys.partition(delivery.game_id)
        assert await moved.zscore(keys.webhook_outbox(p), delivery.id) == 100.0
        assert outbox.decode(await moved.hget(keys.webhook_deliveries(p), delivery.id)) == delivery
    for g in games_:
        p = keys.partition(g)
        assert await moved.get(keys.webhook_position(g)) == b"3"
        assert (await moved.zscore(keys.games(p), g), await moved.zscore(keys.deadlines(p), g)) == (1.0, 50.0)
        assert await moved.zscore(keys.refusals(p), f"{g}\nseat:cmd") == 60.0
    assert sorted(d.game_id for d, _ in await outbox.dead_letters(moved)) == sorted(games_[:2])
    assert await moved.get(keys.TOKEN_SECRET) == b"secret"
    await moved.aclose()


def test_the_migration_bench_times_a_copy_of_finished_games():
    done = souk("bench", "migrate", "--games", "1", "--cluster-partitions", "0", env=clean_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the store: 1 finished games" in done.stdout and "'seconds':" in done.stdout, done.stdout
    assert "migrated the event store" in done.stdout and "(1 partition -> 4)" in done.stdout, done.stdout


async def test_a_copy_that_differs_from_its_source_is_refused_and_not_made_a_store(redis, redis_url, monkeypatch):
    check(Settings(redis_url=redis_url), views=False)
    tokens = await played(Engine(redis, RedisEventStore(redis)), random.Random(7), moves=1)
    target = database(redis_url, 2)
    checked = migration.verified

    def tampered(source, copy, *args):
        game_id = sorted(tokens)[1]
        copy.xdel(keys.game_stream(game_id), copy.xrange(keys.game_stream(game_id))[-1][0])  # an event lost
        checked(source, copy, *args)

    monkeypatch.setattr(migration, "verified", tampered)
    with pytest.raises(StoreError) as refused:
        migration.migrate_to(Settings(redis_url=redis_url, partitions=2), target)
    assert refused.value.code == "verify_failed" and sorted(tokens)[1] in str(refused.value)
    moved = sync_redis.Redis.from_url(target)
    assert moved.exists(MIGRATION) and not moved.exists(ROLE)  # refused as a store until run again
