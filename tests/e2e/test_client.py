"""The Python SDK (services/client) against a real `souk serve`: whole games played by bots that each follow
their seat's WebSocket, and follow() resuming after its connection is cut under it."""

from __future__ import annotations

import asyncio
import random

import httpx
import msgspec
import pytest

from contracts import samarkand, yspahan
from contracts.api import Created, Joined
from contracts.base import Command
from contracts.readmodels import HistoryPage, TableView
from services.history.audit import verify_audit, verify_history
from services.client import Seat, SoukClient, SoukError

pytestmark = pytest.mark.anyio

VIEW_TYPES = {"samarkand": samarkand.SamarkandView, "yspahan": yspahan.YspahanView}


async def bot(seat: Seat, rng: random.Random) -> list[int]:
    """Plays one seat from its WebSocket: on each view that awaits it, one of its legal commands, decided on that
    view (expected_version). Another seat moving first makes it stale: the next view decides again."""
    seen = []
    async for view in seat.follow():
        seen.append(view.version)
        assert view.seat == seat.seat and view.version == seat.version
        if view.status == "playing" and seat.seat in view.flow.awaiting:
            assert view.legal and all(isinstance(c, Command) for c in view.legal)
            assert isinstance(view.view, VIEW_TYPES[view.game])
            try:
                reply = await seat.send(rng.choice(view.legal))
                assert reply.status == "accepted" and reply.version > view.version
            except SoukError as exc:
                assert exc.status == 409 and exc.code == "stale", exc
        assert len(seen) < 5000
    return seen


@pytest.mark.parametrize(("game", "seats"), [("samarkand", 4), ("yspahan", 3)])
async def test_a_whole_game_is_played_through_the_sdk_with_every_seat_following_its_websocket(souk_url, game, seats):
    async with SoukClient(souk_url) as souk:
        assert {g.name for g in await souk.catalog()} >= {"samarkand", "yspahan"}
        created = await souk.create(game, f"sdk {game}", seats, seed="5eed" * 16, unfair=True)
        players = [await souk.join(created.game_id, f"bot{i}") for i in range(seats)]
        assert [p.seat for p in players] == list(range(seats)) and len({p.token for p in players}) == seats

        async def spectate() -> list[TableView]:
            return [view async for view in souk.follow(created.game_id)]

        spectator = asyncio.create_task(spectate())
        seen = await asyncio.wait_for(asyncio.gather(*(bot(p, random.Random(p.seat)) for p in players)), 240)
        final = await souk.view(created.game_id)
        assert final.status == "over" and final.result is not None and len(final.result.scores) == seats
        for versions in seen:  # each seat saw its views in order, none twice, up to the last
            assert versions == sorted(set(versions)) and versions[-1] == final.version
        watched = await asyncio.wait_for(spectator, 15)
        assert [v.version for v in watched] == sorted({v.version for v in watched}) and watched[-1] == final
        assert all(v.seat is None and v.legal == () for v in watched)
        over, next_cursor = await souk.lobby(game=game, status="over")
        assert [(e.game_id, e.unfair) for e in over] == [(created.game_id, True)] and next_cursor is None

        # the history, paged through the SDK, typed as the game's events
        entries = [e async for e in players[0].entries()]
        assert [e.seq for e in entries] == list(range(1, final.version + 1))
        assert all(isinstance(e.event, msgspec.Struct) for e in entries)
        page = await players[0].history(after=0, limit=10)
        assert len(page.entries) == 10 and page.next_after == 10
        public = [msgspec.to_builtins(e) async for e in souk.entries(created.game_id)]
        assert verify_history(created.game_id, public) == []
        audit = await souk.audit(created.game_id)
        assert audit.seed == "5eed" * 16 and verify_audit(msgspec.to_builtins(audit)) == []

        # the whole game is over: a command is refused with its code, typed
        with pytest.raises(SoukError) as refused:
            await players[0].send({"type": f"{game}.Pass" if game == "samarkand" else "yspahan.EndTurn"},
                                  expected_version=None)
        assert refused.value.status == 422 and refused.value.code == "game_over"


class Cutter(httpx.AsyncBaseTransport):
    """The client's transport, keeping each WebSocket's network stream so that a test can cut it."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sockets: list = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.headers.get("upgrade", "").lower() == "websocket" and response.status_code == 101:
            self.sockets.append(response.extensions["network_stream"])
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def two_players(http: httpx.AsyncClient, title: str) -> tuple[SoukClient, Created, list[Seat]]:
    """A client on ``http``, and a two-player Yspahan game it created and joined twice."""
    souk = SoukClient(http=http)
    created = await souk.create("yspahan", title, 2)
    return souk, created, [await souk.join(created.game_id, f"p{i}") for i in range(2)]


async def test_follow_resumes_after_its_connection_is_cut_without_losing_or_repeating_a_version(souk_url):
    cutter = Cutter()
    async with httpx.AsyncClient(base_url=souk_url, transport=cutter, timeout=15) as http:
        souk, created, players = await two_players(http, "cut")
        yielded: list[int] = []
        arrived = asyncio.Condition()

        async def follow() -> None:
            async for view in players[0].follow():
                async with arrived:
                    yielded.append(view.version)
                    arrived.notify_all()

        async def until_yielded(version: int) -> None:
            async with arrived:
                await asyncio.wait_for(arrived.wait_for(lambda: yielded and yielded[-1] >= version), 15)

        follower = asyncio.create_task(follow())
        try:
            await until_yielded((await souk.view(created.game_id)).version)
            expected = [yielded[-1]]
            for cut in range(6):
                await cutter.sockets[-1].aclose()
                if cut % 2:  # the socket comes back while nothing changes: its first frame is one already yielded
                    while len(cutter.sockets) < cut + 2:
                        await asyncio.sleep(0.02)
                    await asyncio.sleep(0.2)
                # one command, sent while the socket is down or just back: its version is yielded, once
                view = await souk.view(created.game_id)
                player = players[view.flow.awaiting[0]]
                reply = await player.send((await player.legal()).legal[0])
                await until_yielded(reply.version)
                expected.append(reply.version)
            assert yielded == expected
            assert len(cutter.sockets) == 7  # one socket, then one after each cut
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)

        # a refused socket is a final error, not a reconnection loop
        stranger = Seat(souk, "yspahan", Joined(created.game_id, 1, "wrong", 0))
        with pytest.raises(SoukError) as refused:
            await anext(stranger.follow())
        assert (refused.value.status, refused.value.code) == (401, "bad_token")


class Blocker(Cutter):
    """A Cutter that refuses new WebSockets while ``down`` (a network that is away), and keeps their URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.urls: list[httpx.URL] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("upgrade", "").lower() == "websocket":
            self.urls.append(request.url)
            if self.down:
                raise httpx.ConnectError("the network is away")
        return await super().handle_async_request(request)


async def test_follow_reconnects_from_the_last_version_received_and_yields_what_it_missed(souk_url):
    blocker = Blocker()
    async with httpx.AsyncClient(base_url=souk_url, transport=blocker, timeout=15) as http:
        souk, created, players = await two_players(http, "missed")
        frames = players[0].follow(missed=True)
        first = await anext(frames)
        assert isinstance(first, TableView) and "from" not in blocker.urls[0].params
        blocker.down = True
        await blocker.sockets[-1].aclose()
        version = first.version
        for _ in range(3):  # played while the socket is away
            view = await souk.view(created.game_id, min_version=version)
            player = players[view.flow.awaiting[0]]
            version = (await player.send((await player.legal()).legal[0], expected_version=None)).version
        await souk.view(created.game_id, min_version=version)
        blocker.down = False
        page = await asyncio.wait_for(anext(frames), 15)
        assert isinstance(page, HistoryPage), page
        assert [e.seq for e in page.entries] == list(range(first.version + 1, version + 1))
        assert all(isinstance(e.event, msgspec.Struct) for e in page.entries)  # typed as the game's events
        own = await players[0].history(after=first.version, limit=100)
        assert page.entries == own.entries  # as this seat's history shows them
        view = await asyncio.wait_for(anext(frames), 15)
        assert isinstance(view, TableView) and view.version == version
        assert blocker.urls[-1].params["from"] == str(first.version)  # every reconnection resumed from there
        assert all(url.params.get("from") == str(first.version) for url in blocker.urls[1:])
        await frames.aclose()


async def test_follow_with_commands_sends_the_seats_commands_on_its_socket_and_http_once_it_is_closed(souk_url):
    """``follow(commands=True)``: while the socket is open ``send`` goes over it (no POST), with the POST's
    answers and errors; once the follow ends, ``send`` POSTs again."""
    posted: list[str] = []

    async def seen(request: httpx.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/commands"):
            posted.append(request.url.path)

    async with httpx.AsyncClient(base_url=souk_url, timeout=30, event_hooks={"request": [seen]}) as http:
        souk, created, players = await two_players(http, "sdk ws commands")

        accepted: list[int] = []

        enough = asyncio.Event()

        async def play(seat: Seat, rng: random.Random) -> None:
            async for view in seat.follow(commands=True):  # until 10 commands are in (each pushes to both)
                if len(accepted) >= 10 or view.status != "playing":
                    break
                if seat.seat in view.flow.awaiting:
                    try:
                        reply = await seat.send(rng.choice(view.legal))
                        assert reply.status == "accepted" and reply.seat == seat.seat
                        accepted.append(reply.version)
                    except SoukError as exc:
                        assert exc.status == 409 and exc.code == "stale", exc
            enough.set()

        # The first seat done ends both: the 10th command's view may reach the other seat before that command's
        # answer reaches its sender (a push may come before the answer), and no view comes after it.
        plays = [asyncio.create_task(play(p, random.Random(p.seat))) for p in players]
        try:
            await asyncio.wait_for(enough.wait(), 60)
        finally:
            for task in plays:
                task.cancel()
            ended = await asyncio.gather(*plays, return_exceptions=True)
        assert not [e for e in ended if not isinstance(e, (type(None), asyncio.CancelledError))], ended
        assert len(accepted) >= 10 and accepted == sorted(set(accepted))
        assert posted == []  # every command went on a socket
        # a command the rules refuse: the same SoukError as over HTTP, on the socket too. A play cancelled above may
        # have left its command in flight, decided after (CI, 3 workers: the seat read as waiting from an older view
        # was awaited by then and its command accepted): the game first stops moving
        settled, version = -1, (await http.get(f"/games/{created.game_id}/view")).json()["version"]
        while version != settled:
            await asyncio.sleep(0.5)
            settled, version = version, (await http.get(f"/games/{created.game_id}/view")).json()["version"]
        frames = players[0].follow(commands=True)
        view = await frames.__anext__()
        assert view.version >= settled
        waiting = 1 - view.flow.awaiting[0] if len(view.flow.awaiting) == 1 else None
        if waiting is not None:
            with pytest.raises(SoukError) as refused:
                await players[waiting].send(view.legal[0] if view.legal else {"type": "yspahan.EndTurn"},
                                            expected_version=None)
            assert refused.value.code in ("not_your_turn", "not_awaited") and refused.value.status == 422
        await frames.aclose()
        assert posted == [f"/games/{created.game_id}/seats/{waiting}/commands"] if waiting == 1 else posted == []
        seat = players[view.flow.awaiting[0]]
        legal = (await seat.legal()).legal
        reply = await seat.send(legal[0])  # no follow open: POSTed
        assert reply.status == "accepted" and posted[-1] == f"/games/{created.game_id}/seats/{seat.seat}/commands"
        await souk.aclose()
