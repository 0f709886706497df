"""Projectors: views per seat, redacted history, lobby, exactly-once effect under redelivery, rebuild."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import redis.asyncio as aioredis

from contracts.readmodels import HistoryRecord, LobbyEntry, TableView
from contracts.table import CreateGame, JoinSeat
from services.store import keys
from services.runtime.config import Settings
from services.engine.service import Engine
from services.projector.service import Partition, Projector
from services.store.events import RedisEventStore
from services.cli.workers import Workers
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio
view_of = msgspec.json.Decoder(TableView).decode


async def project_all(redis, projector: Projector) -> None:
    entries = await redis.xrange(keys.events(0))
    await projector.handle([fields for _, fields in entries])


async def test_each_seat_sees_its_secret_and_nobody_elses(redis):
    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    await project_all(redis, Projector(redis, store))
    secrets = {}
    for seat in (0, 1, None):
        view = view_of(await redis.hget(keys.views("g1"), keys.audience(seat)))
        assert view.version == 5 and view.status == "playing"
        secrets[seat] = view.view["my_secret"]
        history = [msgspec.json.decode(h, type=HistoryRecord).for_audience(keys.audience(seat))
                   for h in await redis.lrange(keys.history("g1"), 0, -1)]
        drawn = [h.event for h in history if h.type == "tally.SecretsDrawn"][0]
        assert [s for i, s in enumerate(drawn["secrets"]) if i != seat] == [-1] * (1 if seat is not None else 2)
        assert all(h.event.get("token_hash", "") == "" for h in history)
    assert secrets[None] is None and secrets[0] != secrets[1] or secrets[0] == secrets[1]
    # an event that hides something is stored as the spectator sees it plus a variant for each seat that sees
    # more (here both seats: each sees its own secret); every other one once for all (token hashes blanked)
    records = [msgspec.json.decode(h, type=HistoryRecord) for h in await redis.lrange(keys.history("g1"), 0, -1)]
    assert all(r.shared is not None for r in records)
    assert [sorted(r.by_audience) for r in records] == [[]] * 4 + [["0", "1"]]
    turn = view_of(await redis.hget(keys.views("g1"), keys.audience(None))).flow.awaiting[0]
    assert view_of(await redis.hget(keys.views("g1"), keys.audience(turn))).legal
    assert view_of(await redis.hget(keys.views("g1"), keys.audience(1 - turn))).legal == ()
    lobby = msgspec.json.decode(await redis.hget(keys.game_lobby("g1"), "g1"), type=LobbyEntry)
    assert lobby.status == "playing" and [s.name for s in lobby.seats] == ["p0", "p1"]
    assert await redis.hget(keys.seat_tokens("g1"), "0") == th(0).encode()


async def test_a_redelivered_batch_changes_nothing(redis):
    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    projector = Projector(redis, store)
    await project_all(redis, projector)
    before = {k: await redis.lrange(k, 0, -1) for k in (keys.history("g1"),)}
    await project_all(redis, projector)  # the same entries again
    await project_all(redis, Projector(redis, store))  # and through a fresh projector with no cache
    after = {k: await redis.lrange(k, 0, -1) for k in before}
    assert before == after and len(after[keys.history("g1")]) == 5


async def test_a_projector_without_cache_catches_up_from_the_store(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    await project_all(redis, Projector(redis, store))
    [reply] = await engine.handle([cmd("g1", Add(2), seat=turn, token=th(turn))])
    entries = await redis.xrange(keys.events(0))
    await Projector(redis, store).handle([entries[-1][1]])  # only the newest entry, cold cache
    view = view_of(await redis.hget(keys.views("g1"), keys.audience(None)))
    assert view.version == reply.version and view.view["total"] == 2


async def test_rebuild_gives_the_same_read_models(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    await started(engine, "g2", seats=3)
    await engine.handle([cmd("g1", Add(3), seat=turn, token=th(turn))])
    await project_all(redis, Projector(redis, store))
    names = [keys.views("g1"), keys.views("g2"), keys.history("g1"), keys.history("g2")]
    async def read_models():
        return [await redis.hgetall(names[0]), await redis.hgetall(names[1]), await redis.lrange(names[2], 0, -1),
                await redis.lrange(names[3], 0, -1), await redis.hgetall(keys.lobby(0))]
    before = await read_models()
    assert await Projector(redis, store).rebuild() == 2
    after = await read_models()
    assert before == after


async def wait_for_view(redis, game_id: str, ok, tries: int = 200) -> TableView:
    for _ in range(tries):
        raw = await redis.hget(keys.views(game_id), keys.audience(None))
        if raw and ok(view_of(raw)):
            break
        await asyncio.sleep(0.05)
    return view_of(await redis.hget(keys.views(game_id), keys.audience(None)))


async def test_the_workers_play_through_the_streams_and_reclaim_what_a_dead_consumer_left(redis, redis_url):
    # entries written before any worker exists are still processed (groups are created at 0)
    for c in [cmd("g1", CreateGame("tally", "t", 2, {}, "01" * 32, unfair=True), cid="create"),
              cmd("g1", JoinSeat("a", th(0), 0), seat=0, cid="j0")]:
        await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(c)})
    settings = Settings(redis_url=redis_url, reclaim_idle_ms=200, consumer="first")
    workers = Workers(settings)
    await workers.start()
    try:
        view = await wait_for_view(redis, "g1", lambda v: v.seats[0].name == "a")
        assert [s.name for s in view.seats] == ["a", None]
    finally:
        await workers.stop()
    # a consumer takes the next command and dies before acknowledging it (or the stopped worker's last blocking
    # read, still open on the server for a moment, took it: a consumer gone without acknowledging it all the same)
    await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(cmd("g1", JoinSeat("b", th(1), 1), seat=1, cid="j1"))})
    await redis.xreadgroup(keys.ENGINE_GROUP, "dead", {keys.commands(0): ">"}, count=1)
    assert (await redis.xpending(keys.commands(0), keys.ENGINE_GROUP))["pending"] == 1
    workers = Workers(Settings(redis_url=redis_url, reclaim_idle_ms=200, consumer="second"))
    await workers.start()
    try:
        view = await wait_for_view(redis, "g1", lambda v: v.status == "playing")
        assert view.status == "playing" and [s.name for s in view.seats] == ["a", "b"]
        for _ in range(100):
            if (await redis.xpending(keys.commands(0), keys.ENGINE_GROUP))["pending"] == 0:
                break
            await asyncio.sleep(0.05)
        assert (await redis.xpending(keys.commands(0), keys.ENGINE_GROUP))["pending"] == 0
        assert await redis.xlen(keys.game_stream("g1")) == 5  # nothing applied twice
    finally:
        await workers.stop()


async def test_two_projectors_racing_on_the_same_events_write_each_event_once(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    for i in range(6):
        seat = turn if i % 2 == 0 else 1 - turn
        await engine.handle([cmd("g1", Add(1), seat=seat, token=th(seat), cid=f"r{i}")])
    entries = [fields for _, fields in await redis.xrange(keys.events(0))]
    one, two = Projector(redis, store), Projector(redis, store)
    await asyncio.gather(one.handle(entries[:7]), two.handle(entries[3:]), one.handle(entries[5:]),
                         two.handle(entries))
    history = await redis.lrange(keys.history("g1"), 0, -1)
    seqs = [msgspec.json.decode(h, type=HistoryRecord).for_audience("spectator").seq for h in history]
    assert seqs == list(range(1, 12))
    assert int(await redis.get(keys.position("g1"))) == 11


async def test_a_projector_facing_an_empty_read_store_rebuilds_it_first(redis):
    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    projector = Projector(redis, store)
    assert await projector.initialise() == 1
    assert view_of(await redis.hget(keys.views("g1"), "spectator")).version == 5
    assert await projector.initialise() is None


async def test_a_rebuild_whose_projector_was_killed_is_taken_over_not_waited_for_an_hour(redis, monkeypatch):
    """souk chaos (CI): the read store flushed, its projector killed (-9) in the middle of the rebuild; the projector
    started in its place waited for the rebuild's end mark behind the dead one's lock (an hour's expiry): the views
    stayed behind for the rest of the run. The lock is a lease its holder renews: a dead holder's lapses, and the
    projector waiting takes the rebuild over."""
    from services.projector import service

    monkeypatch.setattr(service, "REBUILD_LEASE_S", 0.6)
    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    await redis.set(service.REBUILD_LOCK, "a projector killed mid-rebuild", px=int(service.REBUILD_LEASE_S * 2000))
    projector = Projector(redis, store)
    assert await asyncio.wait_for(projector.initialise(), 10) == 1
    assert view_of(await redis.hget(keys.views("g1"), "spectator")).version == 5
    assert not await redis.exists(service.REBUILD_LOCK)


async def test_a_long_rebuild_keeps_its_lease_and_nobody_takes_it_over(redis, monkeypatch):
    from services.projector import service

    monkeypatch.setattr(service, "REBUILD_LEASE_S", 0.3)
    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    projector = Projector(redis, store)
    rebuild = projector.rebuild

    async def slow_rebuild(*args, **kwargs):
        await asyncio.sleep(1.0)  # three leases long
        assert await redis.get(service.REBUILD_LOCK) is not None  # renewed all along
        return await rebuild(*args, **kwargs)

    monkeypatch.setattr(projector, "rebuild", slow_rebuild)
    other = Projector(redis, store)
    first = asyncio.create_task(projector.initialise())
    await asyncio.sleep(0.1)
    assert await asyncio.wait_for(other.initialise(), 10) is None  # waited for the mark, did not rebuild too
    assert await first == 1


async def test_each_projection_announces_the_version_status_and_awaited_seats(redis):
    from contracts.readmodels import ViewsUpdated

    store = RedisEventStore(redis)
    await started(Engine(redis, store))
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(keys.view_updates("g1"))
    await project_all(redis, Projector(redis, store))
    message = None
    for _ in range(50):
        message = await pubsub.get_message(timeout=0.1)
        if message:
            break
    await pubsub.aclose()
    notice = msgspec.json.decode(message["data"], type=ViewsUpdated)
    spectator = view_of(await redis.hget(keys.views("g1"), "spectator"))
    assert notice == ViewsUpdated(5, "playing", spectator.flow.awaiting) and len(notice.awaiting) == 1


def test_a_history_record_stored_with_a_variant_for_every_audience_reads_the_same():
    """The format before 2026-11-22: no shared entry for a secret event, one variant per audience."""
    old = b'{"by_audience":{' + b",".join(
        b'"%s":{"seq":5,"type":"tally.SecretsDrawn","seat":null,"command_id":"c","recorded_at":1.0,'
        b'"event":{"who":"%s"},"hash":"h","prev_hash":"p"}' % (a, a) for a in (b"0", b"1", b"spectator")) + b"}}"
    record = msgspec.json.decode(old, type=HistoryRecord)
    assert [record.for_audience(a).event["who"] for a in ("0", "1", "spectator")] == ["0", "1", "spectator"]


def test_a_partition_is_index_of_count():
    assert Partition.parse("1/2") == Partition(1, 2) and Partition.parse("0/1") == Partition()
    assert Partition(1, 2).group == "projector:1/2" and Partition().group == "projector"
    for bad in ("2/2", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(ValueError, match="partition"):
            Partition.parse(bad)


def test_the_partitions_that_never_ran_are_named():
    assert Partition.missing(["projector", "projector:0/2", "engine"]) == ["1/2"]
    assert Partition.missing(["projector:0/2", "projector:1/2", "projector:2/3"]) == ["0/3", "1/3"]
    assert Partition.missing(["projector", "projector:junk", "projector:5/2"]) == []


async def test_partitioned_projectors_each_project_their_own_games_and_together_all(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    games = [f"g{i}" for i in range(8)]
    for game_id in games:
        await started(engine, game_id)
    entries = [fields for _, fields in await redis.xrange(keys.events(0))]
    first, second = Partition(0, 2), Partition(1, 2)
    mine = {g for g in games if first.owns(g.encode())}
    assert mine and mine != set(games) and not any(second.owns(g.encode()) for g in mine)

    await Projector(redis, store, partition=first).handle(entries)  # every entry: it skips the other games
    assert {g for g in games if await redis.exists(keys.views(g))} == mine
    await Projector(redis, store, partition=second).handle(entries)
    partitioned = [(await redis.hgetall(keys.views(g)), await redis.lrange(keys.history(g), 0, -1)) for g in games]
    assert await Projector(redis, store).rebuild() == 8  # one projector for all gives the same read models
    assert [(await redis.hgetall(keys.views(g)), await redis.lrange(keys.history(g), 0, -1)) for g in games] == \
        partitioned


async def test_two_partitioned_projector_workers_project_every_game_through_their_own_groups(redis, redis_url):
    from services.cli.main import _active_projectors
    from services.cli.workers import ENGINE, PROJECTOR

    games = [f"w{i}" for i in range(6)]
    assert {Partition(1, 2).owns(g.encode()) for g in games} == {True, False}  # each worker has games to project
    for game_id in games:
        for c in [cmd(game_id, CreateGame("tally", "t", 2, {}, "01" * 32, unfair=True), cid="create"),
                  cmd(game_id, JoinSeat("a", th(0), 0), seat=0, cid="j0"),
                  cmd(game_id, JoinSeat("b", th(1), 1), seat=1, cid="j1")]:
            await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(c)})
    workers = [Workers(Settings(redis_url=redis_url, consumer="one", projector_partition="0/2")),
               Workers(Settings(redis_url=redis_url, consumer="two", projector_partition="1/2"), roles=(PROJECTOR,))]
    assert workers[0].roles == (ENGINE, PROJECTOR)
    for w in workers:
        await w.start()
    try:
        for game_id in games:
            assert (await wait_for_view(redis, game_id, lambda v: v.status == "playing")).status == "playing"
        groups = {g["name"].decode(): g for g in await redis.xinfo_groups(keys.events(0))}
        assert set(groups) == {"projector:0/2", "projector:1/2"}
        assert sorted(await _active_projectors(redis)) == ["projector-one", "projector-two"]
    finally:
        for w in workers:
            await w.stop()


async def games_in_chunks_of_three(redis, monkeypatch, prefix: str):
    """Eight started tally games and their events, with the projector's chunks cut to 3 games (3, 3 and 2)."""
    from services.projector import service as projector_module

    monkeypatch.setattr(projector_module, "CHUNK", 3)
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    games = [f"{prefix}{i}" for i in range(8)]
    for game_id in games:
        await started(engine, game_id)
    return store, games, [fields for _, fields in await redis.xrange(keys.events(0))]


async def assert_each_event_projected_once(redis, games: list[str]) -> None:
    for game_id in games:
        history = await redis.lrange(keys.history(game_id), 0, -1)
        assert [msgspec.json.decode(h, type=HistoryRecord).for_audience("spectator").seq for h in history] == \
            [1, 2, 3, 4, 5], game_id
        assert int(await redis.get(keys.position(game_id))) == 5


async def test_a_big_batch_goes_in_chunks_and_a_chunk_that_conflicts_is_projected_again(redis, monkeypatch):
    store, games, entries = await games_in_chunks_of_three(redis, monkeypatch, "c")
    seq = [msgspec.json.decode(f[b"e"])["seq"] for f in entries]
    mine = Projector(redis, store)
    await mine.handle([f for f, s in zip(entries, seq) if s <= 2])  # its cache: every game at 2
    rival = [f for f, s in zip(entries, seq) if s == 3 and f[b"g"] == b"c4"]
    await Projector(redis, store).handle(rival)  # moves c4 to 3 behind its back
    await mine.handle([f for f, s in zip(entries, seq) if s > 2])  # c4's chunk conflicts, is redone
    await assert_each_event_projected_once(redis, games)


async def test_a_chunk_whose_write_fails_is_projected_when_the_batch_comes_again(redis, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    store, games, entries = await games_in_chunks_of_three(redis, monkeypatch, "f")
    projector = Projector(redis, store)
    real, calls = projector.lean.evalsha, [0]

    async def second_call_fails(*args):
        calls[0] += 1
        if calls[0] == 2:
            raise RedisConnectionError("connection to Redis lost")
        return await real(*args)

    monkeypatch.setattr(projector.lean, "evalsha", second_call_fails)
    with pytest.raises(RedisConnectionError):
        await projector.handle(entries)
    assert 0 < sum([await redis.exists(keys.views(g)) for g in games]) < len(games)  # some chunks landed
    await projector.handle(entries)  # redelivered: what did not land is projected, nothing twice
    await assert_each_event_projected_once(redis, games)


async def test_a_batch_of_one_chunk_is_written_without_a_task_and_its_failed_write_is_projected_again(redis, monkeypatch):
    import types

    from redis.exceptions import ConnectionError as RedisConnectionError
    from services.projector import service as projector_module

    def no_task(*args, **kwargs):
        raise AssertionError("a task or a gather for a batch of one chunk")

    monkeypatch.setattr(projector_module, "asyncio", types.SimpleNamespace(
        **{**vars(asyncio), "ensure_future": no_task, "gather": no_task}))
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    games = ["o0", "o1"]
    for game_id in games:
        await started(engine, game_id)
    entries = [fields for _, fields in await redis.xrange(keys.events(0))]
    projector = Projector(redis, store)
    real = projector.lean.evalsha

    async def lost(*args):
        raise RedisConnectionError("connection to Redis lost")

    monkeypatch.setattr(projector.lean, "evalsha", lost)
    with pytest.raises(RedisConnectionError):
        await projector.handle(entries)
    assert projector.cache.get("o0") is None  # not ahead of the read store
    monkeypatch.setattr(projector.lean, "evalsha", real)
    await projector.handle(entries)  # redelivered
    await assert_each_event_projected_once(redis, games)


async def test_a_batch_that_fails_while_computed_leaves_no_cached_table_ahead_of_the_read_store(redis, monkeypatch):
    store, games, entries = await games_in_chunks_of_three(redis, monkeypatch, "h")
    projector = Projector(redis, store)
    real = projector._write

    def fails_on_h4(writes, game_id, projected, envelopes):
        if game_id == "h4":  # the second chunk's second game: h3 is computed (and cached) before it
            raise RuntimeError("boom")
        return real(writes, game_id, projected, envelopes)

    monkeypatch.setattr(projector, "_write", fails_on_h4)
    with pytest.raises(RuntimeError, match="boom"):
        await projector.handle(entries)
    monkeypatch.setattr(projector, "_write", real)
    await projector.handle(entries)
    await assert_each_event_projected_once(redis, games)


async def test_a_running_projector_rebuilds_a_lost_read_store_by_itself(redis, redis_url):
    """Issue #8 item 10: a flushed (or restarted empty) read store used to leave every game 404 until the
    projector was restarted."""
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    views = aioredis.Redis.from_url(views_url)
    await views.flushdb()
    workers = Workers(Settings(redis_url=redis_url, views_redis_url=views_url, read_store_check_s=0.2))
    await workers.start()
    try:
        for c in [cmd("g1", CreateGame("tally", "t", 2, {}), cid="create"),
                  cmd("g1", JoinSeat("a", th(0), 0), seat=0, cid="j0"),
                  cmd("g1", JoinSeat("b", th(1), 1), seat=1, cid="j1")]:
            await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(c)})
        view = await wait_for_view(views, "g1", lambda v: v.status == "playing")
        assert view.status == "playing"
        await views.flushdb()  # the read store is lost; no command comes after
        view = await wait_for_view(views, "g1", lambda v: v.status == "playing", tries=100)
        assert view.status == "playing" and [s.name for s in view.seats] == ["a", "b"]
        assert await views.hget(keys.seat_tokens("g1"), "0") == th(0).encode()
        assert await views.hexists(keys.game_lobby("g1"), "g1")
    finally:
        await workers.stop()
        await views.aclose()


async def test_each_projection_pushes_the_views_it_stored_just_before_its_notice_unless_too_big_or_rebuilt(
        redis, monkeypatch):
    """``souk:pushes:{game}:{version}:{audience}`` (services.store.pushes): each view exactly as stored, published in the
    same script just before the ``ViewsUpdated`` notice; not when the views are bigger than ``PUSH_VIEWS_MAX`` nor
    in a rebuild (the gateway reads them then)."""
    from services.projector import service
    from services.store import pushes

    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.psubscribe("souk:pushes:*", "souk:updates:*")

    async def heard() -> list[tuple[str, bytes]]:
        got, deadline = [], asyncio.get_running_loop().time() + 0.3
        while asyncio.get_running_loop().time() < deadline:  # (None for the subscription's confirmation too)
            if (message := await pubsub.get_message(timeout=0.05)) is not None:
                got.append((message["channel"].decode(), message["data"]))
        return got

    await project_all(redis, Projector(redis, store))
    got = await heard()
    stored = await redis.hgetall(keys.views("g1"))
    assert got[-1][0] == keys.view_updates("g1")  # the notice last
    assert sorted(got[:-1]) == sorted((pushes.channel("g1", 5, a.decode()), v) for a, v in stored.items())
    assert sorted(stored) == [b"0", b"1", b"spectator"]

    await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn))])
    monkeypatch.setattr(service, "PUSH_VIEWS_MAX", sum(len(v) for v in stored.values()) - 1)
    await project_all(redis, Projector(redis, store))
    assert [channel for channel, _ in await heard()] == [keys.view_updates("g1")]  # the notice alone
    monkeypatch.undo()
    await Projector(redis, store).rebuild()
    assert [channel for channel, _ in await heard()] == [keys.view_updates("g1")]
    await pubsub.aclose()
