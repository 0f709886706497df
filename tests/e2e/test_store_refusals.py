"""Every refusal of the event store is the server's trouble, said so (issue #18 item 1): a real redis-server put in
each state (loading its data after a restart, out of memory under noeviction, a read-only replica, a busy
script) behind a real `souk serve`, and every write of the gateway is answered 503 ``store_unavailable`` with
``Retry-After``; no route of the gateway answers 500 while the store refuses."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator

import hiredis
import httpx
import pytest
import redis
from httpx_ws import WebSocketDisconnect, aconnect_ws

from services.embedded.redis import RedisServer
from tests.e2e.support import bearer, serve, started_game

pytestmark = pytest.mark.anyio

# Busy for 20 s at most, even if the test that started it never ends it (SCRIPT KILL)
BUSY_SCRIPT = "local stop = redis.call('TIME')[1] + 20 while tonumber(redis.call('TIME')[1]) < stop do end"


@contextlib.contextmanager
def souk_on(tmp_path) -> Iterator[tuple[RedisServer, str]]:
    """A redis-server of the test's own (the event store in database 0, the read store in 1) and `souk serve`."""
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    base = server.url.rsplit("/", 1)[0]
    try:
        with serve(f"{base}/0", f"{base}/1", tmp_path / "souk.log", {"SOUK_REPLY_TIMEOUT": "2"}) as url:
            yield server, url
    finally:
        server.stop()


def admin(server: RedisServer) -> redis.Redis:
    return redis.Redis(port=server.port, socket_timeout=10)


class Scene:
    """A started game (its tokens) and a game open for players, made while the store took writes."""

    def __init__(self, playing: str, tokens: list[str], open_game: str, creator: str) -> None:
        self.playing, self.tokens, self.open_game, self.creator = playing, tokens, open_game, creator


async def set_scene(client: httpx.AsyncClient) -> Scene:
    playing, tokens = await started_game(client, "yspahan", 2, "refusals")
    r = await client.post("/games", json={"game": "yspahan", "title": "open", "seats": 3})
    assert r.status_code == 201, r.text
    return Scene(playing, tokens, r.json()["game_id"], r.json()["creator_token"])


def assert_store_unavailable(r: httpx.Response, *words: str) -> None:
    assert r.status_code == 503, f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text}"
    body = r.json()
    assert body["code"] == "store_unavailable", r.text
    assert int(r.headers["retry-after"]) >= 1, r.headers
    for word in words:
        assert word in body["message"], body


async def a_legal_command(client: httpx.AsyncClient, scene: Scene) -> tuple[int, dict]:
    view = (await client.get(f"/games/{scene.playing}/view")).json()
    seat = view["flow"]["awaiting"][0]
    legal = (await client.get(f"/games/{scene.playing}/seats/{seat}/legal",
                              headers=bearer(scene.tokens[seat]))).json()["legal"]
    return seat, legal[0]


async def the_writes(client: httpx.AsyncClient, scene: Scene, seat: int, command: dict, *words: str) -> None:
    """A create, a join and a command: each refused by the store, each a 503 store_unavailable."""
    r = await client.post("/games", json={"game": "yspahan", "title": "refused", "seats": 2})
    assert_store_unavailable(r, *words)
    r = await client.post("/games", json={"game": "yspahan", "title": "refused", "seats": 2,
                                          "request_id": "refused-create-1"})
    assert_store_unavailable(r, *words)
    r = await client.post(f"/games/{scene.open_game}/seats", json={"name": "late"})
    assert_store_unavailable(r, *words)
    r = await client.post(f"/games/{scene.playing}/seats/{seat}/commands", headers=bearer(scene.tokens[seat]),
                          json={"command_id": f"refused-{time.monotonic_ns()}", "command": command})
    assert_store_unavailable(r, *words)


async def every_route(client: httpx.AsyncClient, url: str, scene: Scene) -> dict[str, int]:
    """Each route of the gateway once (the sockets' handshakes too): what each answered."""
    g, t0 = scene.playing, bearer(scene.tokens[0])
    calls = [
        ("GET", "/games", {}), ("POST", "/games", {"json": {"game": "yspahan", "title": "x", "seats": 2}}),
        ("GET", f"/games/{g}", {}), ("DELETE", f"/games/{scene.open_game}", {"headers": bearer(scene.creator)}),
        ("POST", f"/games/{g}/fork", {"json": {"version": 3}}), ("GET", "/health", {}),
        ("GET", "/catalog", {}), ("GET", "/metrics", {}), ("GET", "/asyncapi.json", {}),
        ("POST", f"/games/{scene.open_game}/seats", {"json": {"name": "x"}}),
        ("POST", f"/games/{scene.open_game}/seats", {"json": {"name": "x", "request_id": "join-refused-1"}}),
        ("DELETE", f"/games/{g}/seats/0", {"headers": t0}),
        ("POST", f"/games/{g}/seats/0/rematch", {"headers": t0}),
        ("GET", f"/games/{g}/seats/0/view", {"headers": t0}),
        ("GET", f"/games/{g}/seats/0/view", {"headers": t0, "params": {"min_version": 1000}}),
        ("GET", f"/games/{g}/seats/0/view", {"params": {"at": 2}}),
        ("GET", f"/games/{g}/seats/0/legal", {"headers": t0}),
        ("GET", f"/games/{g}/seats/0/history", {"headers": t0}),
        ("POST", f"/games/{g}/seats/0/commands", {"headers": t0, "json": {"command_id": "every-route",
                                                                          "command": {"type": "x"}}}),
        ("POST", f"/games/{g}/seats/0/undo", {"headers": t0, "json": {"command_id": "every-route-undo"}}),
        ("POST", f"/games/{g}/seats/0/undo/accept", {"headers": t0, "json": {"command_id": "every-route-a"}}),
        ("POST", f"/games/{g}/seats/0/undo/decline", {"headers": t0, "json": {"command_id": "every-route-d"}}),
        ("GET", f"/games/{g}/view", {}), ("GET", f"/games/{g}/view", {"params": {"at": 2}}),
        ("GET", f"/games/{g}/history", {}), ("GET", f"/games/{g}/audit", {}), ("GET", f"/games/{g}/record", {}),
        ("POST", "/verify", {"content": b'{"format": "souk.record"}'}),
    ]
    answers: dict[str, int] = {}
    for method, path, kw in calls:
        r = await client.request(method, path, **kw)
        key = f"{method} {path} {kw.get('params') or ''}".strip()
        answers[key] = r.status_code
        assert r.status_code != 500 and "internal_error" not in r.text, f"{key}: {r.status_code} {r.text}"
    for path in (f"/games/{g}/ws", f"/games/{g}/seats/0/ws?token={scene.tokens[0]}", "/games/nosuchgame/ws",
                 f"/games/{g}/seats/1/ws?token={scene.tokens[1]}&from=1"):
        async with aconnect_ws(f"{url}{path}", client) as ws:
            try:
                await asyncio.wait_for(ws.receive_text(), 5)
                answers[f"WS {path}"] = 200
            except TimeoutError:  # accepted, waiting for the store to send the view: no error either
                answers[f"WS {path}"] = 0
            except WebSocketDisconnect as exc:  # refused: accepted, then closed with 4000 + the HTTP status
                answers[f"WS {path}"] = exc.code
                assert exc.code not in (4500, 1011), f"WS {path}: {exc.code} {exc.reason}"
    return answers


async def test_an_event_store_out_of_memory_answers_503_on_every_write_and_500_nowhere(tmp_path):
    with souk_on(tmp_path) as (server, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scene = await set_scene(client)
            seat, command = await a_legal_command(client, scene)
            store = admin(server)
            store.config_set("maxmemory-policy", "noeviction")
            store.config_set("maxmemory", 1)  # every write is refused: OOM command not allowed
            try:
                with pytest.raises(redis.exceptions.OutOfMemoryError):
                    store.set("probe", "x")
                await the_writes(client, scene, seat, command, "memory")
                answers = await every_route(client, url, scene)
                assert 503 in answers.values(), answers
            finally:
                store.config_set("maxmemory", 0)
            r = await client.post(f"/games/{scene.playing}/seats/{seat}/commands",
                                  headers=bearer(scene.tokens[seat]), json={"command_id": "after", "command": command})
            assert r.status_code == 200, r.text


async def test_an_event_store_that_became_a_read_only_replica_answers_503_on_every_write(tmp_path):
    with souk_on(tmp_path) as (server, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scene = await set_scene(client)
            seat, command = await a_legal_command(client, scene)
            # A failover: a second server takes the data, is promoted, and the gateway's server follows it.
            primary = RedisServer(tmp_path / "primary", appendonly=False).start()
            try:
                new, old = redis.Redis(port=primary.port, socket_timeout=10), admin(server)
                new.replicaof("127.0.0.1", server.port)
                wait_until(lambda: new.info("replication").get("master_link_status") == "up")
                new.replicaof("NO", "ONE")
                old.replicaof("127.0.0.1", primary.port)
                wait_until(lambda: old.info("replication").get("master_link_status") == "up")
                with pytest.raises(redis.exceptions.ReadOnlyError):
                    old.set("probe", "x")
                await the_writes(client, scene, seat, command, "read-only")
                every = await every_route(client, url, scene)
                assert 503 in every.values(), every
            finally:
                with contextlib.suppress(redis.RedisError):
                    admin(server).replicaof("NO", "ONE")
                primary.stop()


async def test_an_event_store_busy_with_a_script_answers_503_on_every_write(tmp_path):
    with souk_on(tmp_path) as (server, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scene = await set_scene(client)
            seat, command = await a_legal_command(client, scene)
            store = admin(server)
            store.config_set("lua-time-limit", 10)  # busy-reply-threshold in Redis 7: BUSY after 10 ms
            busy = socket.create_connection(("127.0.0.1", server.port))
            busy.sendall(hiredis.pack_command(("EVAL", BUSY_SCRIPT, "0")))
            try:
                wait_until(lambda: _busy(store))
                await the_writes(client, scene, seat, command, "busy")
                every = await every_route(client, url, scene)
                assert 503 in every.values(), every
            finally:
                with contextlib.suppress(redis.RedisError):
                    store.script_kill()
                busy.close()


def restarted_loading(server: RedisServer, keys: int, delay_us: int) -> redis.Redis:
    """The store filled with ``keys`` keys, saved and restarted so that each key takes ``delay_us`` to load: Redis
    answers clients meanwhile, -LOADING. Returns a client of it."""
    store = admin(server)
    store.eval(f"for i = 1, {keys} do redis.call('SET', 'filler:' .. i, string.rep('x', 100)) end", 0)
    store.save()
    store.close()
    server.stop()
    server.options = ("--key-load-delay", str(delay_us), "--loading-process-events-interval-bytes", "1024")
    server.start(loading=True)
    return admin(server)


async def test_an_event_store_loading_its_data_after_a_restart_answers_503_on_every_write(tmp_path):
    with souk_on(tmp_path) as (server, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scene = await set_scene(client)
            seat, command = await a_legal_command(client, scene)
            store = restarted_loading(server, 4000, 5000)  # about 20 s of loading
            assert store.info("persistence")["loading"] == 1
            await the_writes(client, scene, seat, command, "loading")
            every = await every_route(client, url, scene)
            assert store.info("persistence")["loading"] == 1, "the store finished loading during the test"
            assert 503 in every.values(), every


def _busy(store: redis.Redis) -> bool:
    try:
        store.ping()
    except redis.exceptions.ResponseError as exc:
        return str(exc).startswith("BUSY")
    return False


def wait_until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the store did not reach the state"
        time.sleep(0.05)


async def test_the_workers_readers_wait_out_an_event_store_loading_its_data_and_read_again_after(tmp_path):
    """A restarted event store answers -LOADING to every read (PING too) until its data is loaded. The engine's and
    the projector's read loops re-raise it to FastStream's supervisor, which starts the loop again: that must not
    become a storm of PINGs and XREADGROUPs for as long as the load lasts (seen at 2026-11-29: 25 PINGs and 3
    XREADGROUPs refused in a 3-s load: the restarted loop's first PING waits on the connection's own retry), and
    the workers must read again, and play, once it ends (the other test of a loading store stops there)."""
    with souk_on(tmp_path) as (server, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scene = await set_scene(client)
            store = restarted_loading(server, 1000, 3000)  # about 3 s of loading
            began = time.monotonic()
            wait_until(lambda: _loaded(store), timeout=60)
            loading_s = time.monotonic() - began
            stats = store.info("commandstats")
            rejected = {name: stats[name].get("rejected_calls", 0) for name in ("cmdstat_xreadgroup", "cmdstat_ping")
                        if name in stats}
            assert loading_s > 1.0, loading_s  # the store did load for a while
            # a few readers, each reading again every second at most while the store loads (the storm: thousands)
            assert sum(rejected.values()) < 60 * loading_s, (rejected, loading_s)
            seat, command = await a_legal_command(client, scene)  # the read store answers: the projector read again
            r = await client.post(f"/games/{scene.playing}/seats/{seat}/commands",
                                  headers=bearer(scene.tokens[seat]),
                                  json={"command_id": "after-the-load", "command": command})
            assert r.status_code == 200 and r.json()["status"] == "accepted", r.text  # the engine reads again


def _loaded(store: redis.Redis) -> bool:
    try:
        return store.info("persistence")["loading"] == 0
    except redis.exceptions.ResponseError:
        return False
