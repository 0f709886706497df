"""Every game's record, end to end: play → GET /games/{id}/record → POST /verify → souk import → the import's
lobby entry, views, history and audit equal the source's (but for its id, and the hashes that cover it), and its
own record verifies. Over every game the kernel registers, so a game registered later is covered too."""

from __future__ import annotations

import json
import random

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from domain.kernel import games
from services.engine.service import Engine
from services.history import record as records
from services.history.audit import verify_audit
from services.history.transfer import import_record, read_record
from services.history.verify import verify_record
from services.projector.history import read_history
from services.projector.service import Projector
from services.store import keys
from services.store.events import RedisEventStore
from tests.history.test_gateway_after_the_end import app_on

pytestmark = pytest.mark.anyio
CHAIN_FIELDS = ("hash", "prev_hash", "commitment")


async def project(projector: Projector, events) -> None:
    """What the projector worker does: read souk:events through its group, project, acknowledge."""
    from services.bench.storage import project_all
    from services.store.streams import ensure_group

    await ensure_group(events, keys.events(0), keys.PROJECTOR_GROUP)
    await project_all(events, projector, "test")


def renamed(raw: bytes | str, source: str, copy: str) -> object:
    """A read model's JSON with the import's id written as the source's."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return json.loads(text.replace(copy, source))


def unchained(entries) -> list[dict]:
    """History entries without the hashes, which cover the game id."""
    return [{k: v for k, v in msgspec.to_builtins(e).items() if k not in CHAIN_FIELDS} for e in entries]


@pytest.mark.parametrize("name", sorted(games()))
async def test_a_games_record_exports_verifies_and_imports_as_the_same_game(stores, redis_url, name):
    from services.bench.storage import play

    events, views = stores
    game = games()[name]
    engine = Engine(events, RedisEventStore(events))
    projector = Projector(views, engine.store)
    try:
        # the same game every time: with a seed of chance's own, 1001 Karawane's bots now and then took over 15,000
        # commands and the record outgrew what POST /verify takes (8 MiB)
        [source] = await play(engine, projector, events, name, game.min_seats, 1, random.Random(11), seed="5e" * 32)
        async with AsyncTestClient(app_on(redis_url)) as client:
            r = await client.get(f"/games/{source}/record")
            assert r.status_code == 200, r.text
            exported = r.content
            r = await client.post("/verify", content=exported)
            assert r.status_code == 200 and r.json()["ok"], r.text
            record = records.decode(exported)
            assert r.json()["events"] == len(record.events) and r.json()["commands"] == len(record.commands)

            copy = await import_record(events, record)
            await project(projector, events)
            assert copy != source

            entries = {g: json.loads(await views.hget(keys.game_lobby(g), g)) for g in (source, copy)}
            assert entries[copy].pop("imported_from") == source and entries[source].pop("imported_from") == ""
            assert renamed(json.dumps(entries[copy]), source, copy) == entries[source]
            source_views, copy_views = [await views.hgetall(keys.views(g)) for g in (source, copy)]
            assert len(source_views) == game.min_seats + 1
            assert {a: renamed(v, source, copy) for a, v in copy_views.items()} == \
                   {a: json.loads(v) for a, v in source_views.items()}
            for seat in (*range(game.min_seats), None):
                pages = [await read_history(events, views, g, seat, 0, 5000) for g in (source, copy)]
                assert pages[0].version == pages[1].version == len(record.events)
                copied = renamed(json.dumps(unchained(pages[1].entries)), source, copy)
                created = copied[0]["event"]  # GameCreated: the import names its source (as the lobby does)
                assert created["imported_from"] == source and pages[0].entries[0].event["imported_from"] == ""
                created["imported_from"] = ""
                assert copied == unchained(pages[0].entries)

            r = await client.get(f"/games/{copy}/audit")
            assert r.status_code == 200 and verify_audit(r.json()) == []
            again = records.decode((await client.get(f"/games/{copy}/record")).content)
            assert again.header.imported_from == source and again.header.result == record.header.result
            assert verify_record(again).ok
    finally:
        await projector.aclose()
        await engine.store.aclose()


async def test_a_record_that_does_not_verify_is_not_imported_and_changes_nothing(stores, finished):
    events, _ = stores
    store = RedisEventStore(events)
    record = await read_record(store, events, finished[0])
    await store.aclose()
    document = json.loads(records.encode(record))
    document["commands"].pop(5)
    games_before = await events.zcard(keys.games(0))
    with pytest.raises(records.RecordError, match="^not imported: the record does not verify: event"):
        await import_record(events, records.decode(json.dumps(document, separators=(",", ":")).encode()))
    assert await events.zcard(keys.games(0)) == games_before


async def test_a_running_game_has_no_record_yet_and_what_is_no_record_is_refused(stores, redis_url):
    from contracts.envelope import CommandEnvelope
    from contracts.table import CreateGame
    from services.store.codec import encoder

    events, views = stores
    engine = Engine(events, RedisEventStore(events))
    projector = Projector(views, engine.store)
    [reply] = await engine.handle([CommandEnvelope("c", "running", msgspec.Raw(encoder.encode(
        CreateGame("yspahan", "open", 2))))])
    assert reply.status == "accepted"
    await project(projector, events)
    await projector.aclose()
    await engine.store.aclose()
    async with AsyncTestClient(app_on(redis_url)) as client:
        r = await client.get("/games/running/record")
        assert r.status_code == 409 and r.json()["code"] == "game_not_over", r.text
        assert (await client.get("/games/nothing-here/record")).status_code == 404
        r = await client.post("/verify", content=b'{"format":"something else"}')
        assert r.status_code == 400 and r.json()["code"] == "bad_record", r.text
        r = await client.post("/verify", content=b"{" * (9 * 1024 * 1024))
        assert r.status_code == 413 and r.json()["code"] == "body_too_large", r.text


async def test_post_verify_names_the_first_event_that_differs(stores, finished, redis_url):
    events, _ = stores
    store = RedisEventStore(events)
    record = await read_record(store, events, finished[0])
    await store.aclose()
    document = json.loads(records.encode(record))
    dropped = document["events"].pop(30)
    async with AsyncTestClient(app_on(redis_url)) as client:
        r = await client.post("/verify", content=json.dumps(document, separators=(",", ":")).encode())
    assert r.status_code == 200, r.text
    verdict = r.json()
    assert not verdict["ok"] and verdict["first_difference"] == dropped["seq"]
    assert verdict["summary"] == verdict["problems"][0] and verdict["summary"].startswith(f"event {dropped['seq']} ")


async def test_post_verify_refuses_a_header_that_lies_and_names_what_it_cannot_check(stores, finished, redis_url):
    events, _ = stores
    store = RedisEventStore(events)
    record = await read_record(store, events, finished[0])
    await store.aclose()
    honest = records.encode(record)
    document = json.loads(honest)
    document["header"].update(title="a title of my own", players=["mallory", "eve"])
    async with AsyncTestClient(app_on(redis_url)) as client:
        forged = (await client.post("/verify", content=json.dumps(document, separators=(",", ":")).encode())).json()
        kept = (await client.post("/verify", content=honest)).json()
    assert not forged["ok"] and forged["first_difference"] is None, forged
    assert [p for p in forged["problems"] if p.startswith("the header's ")] == [
        f"the header's title is 'a title of my own', the events say {record.header.title!r}",
        f"the header's players is ['mallory', 'eve'], the events say {list(record.header.players)!r}"]
    assert kept["ok"] and kept["unverified"] == ["archived_at"], kept
