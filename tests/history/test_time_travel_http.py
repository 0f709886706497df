"""Time travel over HTTP (issue #10 §1): ``GET …/view?at=N``, ``…/seats/{seat}/view?at=N`` and
``…/seats/{seat}/legal?at=N`` answer what that audience saw at version N (the fold of the game's first N stored
events), a seat only with its token while the game runs and anyone once it is over; a version the game does not
have is 400 ``bad_version``; an archived game is 410 and its snapshots are gone with its other read models."""

from __future__ import annotations

import hashlib
import random
import secrets
import time

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from services.engine.service import Engine
from services.history.archive import archive
from services.projector.service import FINISHED_TTL_S, Projector
from services.store import keys
from services.store.codec import encoder, fold_stream
from services.store.events import RedisEventStore
from tests.history.test_gateway_after_the_end import app_on
from tests.history.test_time_travel import before_command, project_all

pytestmark = pytest.mark.anyio


def command(game_id: str, body, seat: int | None = None, token: str | None = None) -> CommandEnvelope:
    return CommandEnvelope(secrets.token_hex(16), game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                           token_hash=None if token is None else hashlib.sha256(token.encode()).hexdigest(),
                           sent_at=time.time())


async def running_game(events, views, moves: int, seed: int = 3, game: str = "yspahan") -> tuple[str, list[str]]:
    """A 3-player game played ``moves`` random legal commands through the engine, projected (a snapshot every 20
    events); its id and the seats' tokens."""
    rng = random.Random(seed)
    engine = Engine(events, RedisEventStore(events))
    projector = Projector(views, engine.store, snapshot_every=20)
    game_id, tokens = "running", [f"token-{s}" for s in range(3)]
    try:
        await engine.handle([command(game_id, CreateGame(game, "travel", 3))])
        await engine.handle([command(game_id, JoinSeat(f"p{s}", hashlib.sha256(t.encode()).hexdigest()))
                             for s, t in enumerate(tokens)])
        for _ in range(moves):
            table = (await engine.load(game_id)).table
            seat = rng.choice(tbl.flow(table).awaiting)
            move = rng.choice(tbl.game_of(table).legal_commands(table.state, seat))
            [reply] = await engine.handle([command(game_id, move, seat, tokens[seat])])
            assert reply.status == "accepted", reply
        await project_all(events, projector)
    finally:
        await projector.aclose()
        await engine.store.aclose()
    return game_id, tokens


def as_json(value) -> object:
    return msgspec.json.decode(encoder.encode(value))


async def expected_views(events, game_id: str, n: int) -> dict:
    """Each audience's view of the first ``n`` events, or of those before the command ``n`` is inside."""
    envelopes = await RedisEventStore(events).read(game_id)
    n = before_command([e.command_id for e in envelopes], n)
    return {seat: as_json(view) for seat, view in tbl.views(fold_stream(envelopes[:n]), game_id).items()}


async def test_a_seat_sees_at_n_what_it_saw_then_with_its_own_token_while_the_game_runs(stores, redis_url):
    events, views = stores
    game_id, tokens = await running_game(events, views, moves=60)
    length = await events.xlen(keys.game_stream(game_id))
    assert await views.zcard(keys.snapshots(game_id)) == length // 20
    assert await views.ttl(keys.snapshots(game_id)) == -1  # kept while the game runs
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    rng = random.Random(1)
    async with AsyncTestClient(app_on(redis_url)) as client:
        for n in sorted({1, 6, 19, 20, 21, length, *(rng.randint(1, length) for _ in range(6))}):
            expected = await expected_views(events, game_id, n)
            for seat in range(3):
                r = await client.get(f"/games/{game_id}/seats/{seat}/view", params={"at": n}, headers=auth[seat])
                assert r.status_code == 200, r.text
                assert r.json() == expected[seat], (n, seat)
                r = await client.get(f"/games/{game_id}/seats/{seat}/legal", params={"at": n}, headers=auth[seat])
                assert r.status_code == 200 and r.json()["version"] == expected[seat]["version"] <= n
                assert r.json()["legal"] == expected[seat]["legal"], (n, seat)
            r = await client.get(f"/games/{game_id}/view", params={"at": n})
            assert r.status_code == 200 and r.json() == expected[None], n
        # before the end, a seat's past is its own: no token, or another seat's, is refused
        n = length // 2
        for headers, code in (({}, "missing_token"), (auth[1], "bad_token")):
            for route in ("view", "legal"):
                r = await client.get(f"/games/{game_id}/seats/0/{route}", params={"at": n}, headers=headers)
                assert r.status_code == 401 and r.json()["code"] == code, r.text
        # the view at the current version is the projected view; but presence, which is now's, not a version's: a
        # view of the past shows none
        now = await client.get(f"/games/{game_id}/seats/2/view", headers=auth[2])
        r = await client.get(f"/games/{game_id}/seats/2/view", params={"at": length}, headers=auth[2])
        projected = now.json()
        assert projected.pop("presence")[2]["connected"]  # its requests with its token
        assert r.json() == {**projected, "presence": []}
        for bad in (0, -1, length + 1, 2**63):
            for path in (f"/games/{game_id}/view", f"/games/{game_id}/seats/0/view", f"/games/{game_id}/seats/0/legal"):
                r = await client.get(path, params={"at": bad}, headers=auth[0])
                assert r.status_code == 400 and r.json()["code"] == "bad_version", (path, bad, r.text)
        r = await client.get("/games/no-such-game/view", params={"at": 1})
        assert r.status_code == 404 and r.json()["code"] == "game_not_found"


async def test_once_the_game_is_over_anyone_reads_every_seats_view_at_every_version(stores, finished, redis_url):
    events, views = stores
    game_id = finished[0]
    length = await events.xlen(keys.game_stream(game_id))
    assert await views.zcard(keys.snapshots(game_id)) == length // 100  # the projector's default interval
    assert 0 < await views.ttl(keys.snapshots(game_id)) <= FINISHED_TTL_S  # caches once over, as its history
    rng = random.Random(2)
    async with AsyncTestClient(app_on(redis_url)) as client:
        for n in sorted({1, 99, 100, 101, length, *(rng.randint(1, length) for _ in range(8))}):
            expected = await expected_views(events, game_id, n)
            for seat in (0, 1):
                r = await client.get(f"/games/{game_id}/seats/{seat}/view", params={"at": n})  # no token
                assert r.status_code == 200 and r.json() == expected[seat], (n, seat, r.text)
            r = await client.get(f"/games/{game_id}/view", params={"at": n})
            assert r.status_code == 200 and r.json() == expected[None]
        await views.delete(keys.snapshots(game_id))  # a cache: the same answers without it (its expiry)
        r = await client.get(f"/games/{game_id}/seats/1/view", params={"at": length - 1})
        assert r.json() == (await expected_views(events, game_id, length - 1))[1]
        r = await client.get(f"/games/{game_id}/seats/2/view", params={"at": 5})
        assert r.status_code == 404 and r.json()["code"] == "no_such_seat", r.text
        r = await client.get(f"/games/{game_id}/seats/0/view")  # the current view still takes the token
        assert r.status_code == 401
    # a rebuild writes no snapshots for a finished game (its caches are not written again), the same answers
    store = RedisEventStore(events)
    assert await Projector(views, store).rebuild() == len(finished)
    assert not await views.exists(keys.snapshots(game_id))
    async with AsyncTestClient(app_on(redis_url)) as client:
        r = await client.get(f"/games/{game_id}/seats/1/view", params={"at": 150})
        assert r.json() == (await expected_views(events, game_id, 150))[1]
    await store.aclose()


async def test_an_archived_games_past_answers_410_and_its_snapshots_are_gone(stores, finished, redis_url, tmp_path):
    events, views = stores
    game_id = finished[0]
    assert await views.exists(keys.snapshots(game_id))
    await archive(events, views, 0, tmp_path)
    assert not await views.exists(keys.snapshots(game_id))
    async with AsyncTestClient(app_on(redis_url)) as client:
        for path in (f"/games/{game_id}/view", f"/games/{game_id}/seats/0/view", f"/games/{game_id}/seats/0/legal"):
            r = await client.get(path, params={"at": 3})
            assert r.status_code == 410 and r.json()["code"] == "archived", (path, r.text)


async def test_a_version_inside_a_command_answers_the_table_before_that_command(stores, redis_url):
    """The last join's command holds the seat, GameStarted and the whole setup (Samarkand's deal): nobody ever saw
    the table between them. Asked for one of those versions, the views are those before the last join (they used
    to fail: Samarkand's views of a started game without its deal)."""
    events, views = stores
    game_id, tokens = await running_game(events, views, moves=3, game="samarkand")
    envelopes = await RedisEventStore(events).read(game_id)
    joined = max(e.seq for e in envelopes if e.type == "table.SeatJoined")
    started = next(e.seq for e in envelopes if e.type == "table.GameStarted")
    dealt = max(e.seq for e in envelopes if e.command_id == envelopes[joined - 1].command_id)
    assert joined < started < dealt
    async with AsyncTestClient(app_on(redis_url)) as client:
        for n in range(joined, dealt):
            for path, headers in ((f"/games/{game_id}/view", {}),
                                  (f"/games/{game_id}/seats/1/view", {"Authorization": f"Bearer {tokens[1]}"})):
                r = await client.get(path, params={"at": n}, headers=headers)
                assert r.status_code == 200, (n, r.text)
                assert r.json()["version"] == joined - 1 and r.json()["status"] == "open", n
        r = await client.get(f"/games/{game_id}/view", params={"at": dealt})
        assert r.json()["version"] == dealt and r.json()["status"] == "playing"
