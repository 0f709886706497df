"""What Souk sends to the read store while games of four partitions are played, recorded: every command, every Lua
call (EVAL/EVALSHA, with its reply) and every MULTI/EXEC, by redis-py and by the lean connection (``Resp``). Shared by
tests/services/test_read_store_slots.py (each call's keys in one slot) and tests/cluster/test_read_store_scripts.py
(each script recorded here runs on a real Redis Cluster).

The read store is database 1 of the test's Redis (``views_url``), the event store database 0: a call is the read
store's by its connection's database."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline

from services.engine.service import Engine
from services.gateway import lobby
from services.gateway.limits import Limits, Rate
from services.gateway.presence import Presence
from services.projector import service as projector_service
from services.projector.history import read_history
from services.projector.service import Projector, forget_read_models
from services.reliability.checks import _read_models
from services.store import keys
from services.store.events import RedisEventStore
from services.store.resp import Resp
from services.store.streams import ensure_group
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

# Every Lua script Souk runs on the read store, by 'path:NAME'.
READ_STORE = {"services/projector/service.py:_APPLY", "services/projector/service.py:_REPLACE",
              "services/projector/service.py:_RENEW", "services/projector/service.py:_RELEASE",
              "services/gateway/limits.py:_GCRA", "services/gateway/limits.py:_RESERVE",
              "services/gateway/presence.py:_TOUCH"}
READ_DB = 1


def scripts(names: set[str] = READ_STORE) -> dict[str, tuple[str, str]]:
    """Each of these scripts ('path:NAME') as its name and its text, by its SHA-1 (what an EVALSHA sends)."""
    out = {}
    for name in names:
        path, constant = name.split(":")
        text = getattr(importlib.import_module(path[:-3].replace("/", ".")), constant)
        out[hashlib.sha1(text.encode()).hexdigest()] = (name, text)
    return out


def script_name(body: str, names: set[str] = READ_STORE) -> str | None:
    """The name of the script of ``names`` that ``body`` (an EVAL's text or an EVALSHA's SHA-1) runs, if any."""
    found = scripts(names)
    script = found.get(body) or found.get(hashlib.sha1(body.encode()).hexdigest())
    return script[0] if script else None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class Sent:
    """A command (``multi`` False) or a MULTI/EXEC's commands, sent to the read store; a script call's reply."""

    commands: list[tuple]
    multi: bool = False
    reply: Any = None
    failed: bool = False  # refused (a NOSCRIPT before the script is loaded and sent again): it ran nothing

    @property
    def script(self) -> str | None:
        """The script's name (``READ_STORE``) when this is an EVAL/EVALSHA of one."""
        if self.multi or _text(self.commands[0][0]).upper() not in ("EVAL", "EVALSHA"):
            return None
        return script_name(_text(self.commands[0][1]))


@dataclass
class Recorder:
    sent: list[Sent] = field(default_factory=list)

    def install(self, monkeypatch) -> None:
        resp_send, execute = Resp._send, aioredis.Redis.execute_command
        in_multi, in_pipeline = Pipeline._execute_transaction, Pipeline._execute_pipeline
        sent = self.sent

        def send(self, args):
            future = resp_send(self, args)
            if int(self.params.get("db") or 0) == READ_DB:
                item = Sent([tuple(args)])
                sent.append(item)
                future.add_done_callback(lambda f: setattr(item, "failed", True) if f.exception()
                                         else setattr(item, "reply", f.result()))
            return future

        async def execute_command(self, *args, **options):
            reply = await execute(self, *args, **options)
            if int(self.connection_pool.connection_kwargs.get("db") or 0) == READ_DB:
                sent.append(Sent([tuple(args)], reply=reply))
            return reply

        async def execute_transaction(self, connection, commands, raise_on_error):
            if int(connection.db or 0) == READ_DB:
                sent.append(Sent([tuple(args) for args, _ in commands], multi=True))
            return await in_multi(self, connection, commands, raise_on_error)

        async def execute_pipeline(self, connection, commands, raise_on_error):
            if int(connection.db or 0) == READ_DB:
                sent.extend(Sent([tuple(args)]) for args, _ in commands)
            return await in_pipeline(self, connection, commands, raise_on_error)

        monkeypatch.setattr(Resp, "_send", send)
        monkeypatch.setattr(aioredis.Redis, "execute_command", execute_command)
        monkeypatch.setattr(Pipeline, "_execute_transaction", execute_transaction)
        monkeypatch.setattr(Pipeline, "_execute_pipeline", execute_pipeline)

    def scripts(self) -> list[Sent]:
        """The script calls that ran (not those refused NOSCRIPT)."""
        return [s for s in self.sent if s.script is not None and not s.failed]

    def multis(self) -> list[Sent]:
        return [s for s in self.sent if s.multi]


def request(client: str, token: str | None = None) -> Any:
    """What ``Limits`` reads of a request: its client's address and its bearer token."""
    return SimpleNamespace(client=SimpleNamespace(host=client), query_params={}, scope={"type": "http"},
                           headers={"authorization": f"Bearer {token}"} if token else {})


def games_in(partitions: tuple[int, ...]) -> list[str]:
    """A game id in each of these partitions (of the partitions in use)."""
    return [next(g for g in (f"g{n}" for n in range(1000)) if keys.partition(g) == p) for p in partitions]


async def play(events: aioredis.Redis, views: aioredis.Redis) -> list[str]:
    """Two tally games of partitions 1 and 3 (of four) played by the engine and projected in one batch, every
    read-store path that writes or reads in a script or a transaction run over them (the gateway's rate limits,
    open-games reservation, presence, lobby listing; the projector's rebuild and its lock; the history's read; the
    chaos check's read; the archive's removal). Returns the games."""
    keys.use(4)
    store = RedisEventStore(events)
    engine = Engine(events, store)
    games = games_in((1, 3))
    turns = {g: await started(engine, g) for g in games}
    await engine.handle([cmd(g, Add(2), seat=turns[g], token=th(turns[g]), cid="a") for g in games])
    for p in keys.PARTITIONS:  # (the projector trims the streams behind its group)
        await ensure_group(events, keys.events(p), keys.PROJECTOR_GROUP)
    projector = Projector(views, store)
    entries = [f for p in keys.PARTITIONS for _, f in await events.xrange(keys.events(p))]
    await projector.handle(entries)  # one batch over two partitions: a chunk for each
    assert await projector.rebuild() == 2
    projector_service.REBUILD_LEASE_S, lease = 0.3, projector_service.REBUILD_LEASE_S
    try:
        assert await projector.initialise() is None  # marked: no rebuild
        await views.delete(keys.READ_STORE_MARK)
        assert await projector.initialise() == 2  # the lock taken, renewed, released
        renewing = asyncio.create_task(projector._renew("someone"))
        await asyncio.sleep(0.25)
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing
    finally:
        projector_service.REBUILD_LEASE_S = lease

    hot = Resp.like(views)
    limits = Limits(views, Rate(100, 10), Rate(100, 10), 2, hot=hot)
    await limits.check_request(request("10.0.0.1", "secret-token"))
    assert await limits.reserve_open_game(request("10.0.0.1"), games[0])
    assert await limits.reserve_open_game(request("10.0.0.1"), games[1])  # reads the first one's lobby entry
    presence = Presence(hot, window_s=60, lease_s=30)
    await presence.seen(games[0], 0)
    async with presence.socket(games[1], 1):
        pass
    listed = await lobby.listed(views, None, None, "+inf", None, 10)
    assert sorted(g.decode() for g, _ in listed) == sorted(games)
    assert all(await lobby.entries(views, [g for g, _ in listed]))

    for g in games:
        page = await read_history(events, views, g, 0, 0, 100)
        assert page.entries
        assert (await _read_models(views, g))["lobby"]
    await forget_read_models(views, games[0], "tally")
    await hot.aclose()
    await projector.aclose()
    await store.aclose()
    return games
