"""The command route's fast path (services/gateway/fastpath.py) answers as Litestar's route does: the same status,
body and headers for an accepted command and for every refusal, on one game, the two apps side by side against the
same stores (the engine and projector run in the first)."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from services.cli.workers import EVERY_ROLE, Workers
from services.gateway import create_app, fastpath
from tests.services.test_webhooks import Play, settings

pytestmark = pytest.mark.anyio


def _answer(r) -> tuple[int, bytes, list[tuple[str, str]]]:
    headers = sorted((k.lower(), v) for k, v in r.headers.multi_items() if k.lower() not in ("traceparent", "date"))
    return r.status_code, r.content, headers


async def test_the_fast_path_answers_every_command_as_litestars_route_does(redis_url, monkeypatch):
    served: list[str] = []  # the requests the fast path served

    class Spied(fastpath.FastRequest):
        def __init__(self, scope: dict) -> None:
            served.append(scope["path"])
            super().__init__(scope)

    monkeypatch.setattr(fastpath, "FastRequest", Spied)
    config = settings(redis_url)
    async with AsyncTestClient(create_app(config, Workers(config, roles=EVERY_ROLE))) as fast, \
            AsyncTestClient(create_app(config, fast_commands=False)) as slow:
        play = Play(fast)
        await play.create(None)
        await play.join(0, None)
        await play.join(1, None)
        view = await play.settled(4)
        seat = view["flow"]["awaiting"][0]
        route = f"/games/{play.game_id}/seats/{seat}/commands"
        good = {"Authorization": f"Bearer {play.tokens[seat]}"}
        add = {"type": "tally.Add", "amount": 1}

        async def both(path: str, content: bytes, headers: dict[str, str]) -> tuple[int, bytes, list]:
            headers = {"content-type": "application/json", **headers}
            before = len(served)
            a = _answer(await fast.post(path, content=content, headers=headers))
            b = _answer(await slow.post(path, content=content, headers=headers))
            assert a == b, (content, a, b)
            return a[0], a[1], [len(served) - before]

        # accepted by Litestar's route, then resent to the fast path: the same answer, byte for byte
        first = await slow.post(route, json={"command_id": "one", "command": add}, headers=good)
        assert first.status_code == 200, first.text
        again = await fast.post(route, json={"command_id": "one", "command": add}, headers=good)
        assert _answer(again) == _answer(first) and served
        refusals = [
            (route, b'{"command_id": "two", "command": {"type": "tally.Add", "amount": 1}}', {}),  # no token
            (route, b'{"command_id": "two", "command": {"type": "tally.Add", "amount": 1}}',
             {"Authorization": "Bearer nope"}),
            (route, b'{"command_id": "two", "command": ', good),  # not JSON
            (route, b'{"command_id": "two", "command": {}, "x": 1}', good),  # an unknown field
            (route, b'{"command_id": "two", "command": {}, "expected_version": "3"}', good),  # strict
            (route, b'{"command_id": "two", "command": {}, "expected_version": -1}', good),
            (route, b'{"command_id": "\xff", "command": {}}', good),  # not UTF-8
            (route, b'{"command_id": "two", "command": {"a": ' + b"[" * 40 + b"]" * 40 + b"}}", good),
            (route, b'{"command_id": "", "command": {"type": "tally.Add", "amount": 1}}', good),
            (route, b'{"command_id": "two", "command": {"type": "nope"}}', good),
            (route, b'{"command_id": "two", "command": {"type": "table.Tick", "key": "k", "due": 1.0}}', good),
            (route, b'{"command_id": "two", "command": {"type": "table.Resign"}}', good),
            (route, b'{"command_id": "two", "command": {"type": "tally.Add", "amount": 1}, "expected_version": 2}',
             good),  # stale
            (f"/games/{play.game_id}/seats/7/commands", b'{"command_id": "two", "command": {}}', good),
            ("/games/nosuchgame/seats/0/commands", b'{"command_id": "two", "command": {}}', good),
            (route, b'{"command_id": "two", "command": {}}', {**good, "x-big": "y" * 20_000}),  # 431
        ]
        for path, content, headers in refusals:
            status, body, [fast_served] = await both(path, content, headers)
            assert 400 <= status < 500 and b'"code"' in body and fast_served == 1, (content, status, body)
        # what the fast path leaves to Litestar: a query string, an empty body, a seat that is no number
        for path, content in [(route + "?token=x", b'{"command_id": "two", "command": {}}'), (route, b""),
                              (f"/games/{play.game_id}/seats/x/commands", b'{"command_id": "two", "command": {}}')]:
            status, body, [fast_served] = await both(path, content, good)
            assert status == 400 and fast_served == 0, (path, content, status, body)
        # and nothing of the refusals was played
        assert (await play.view())["version"] == view["version"] + 1
