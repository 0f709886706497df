"""souk archive: finished games older than the retention go to verified record files; their hot keys go, a
tombstone stays (410 archived), the lobby no longer lists them; anything else stays as it was."""

from __future__ import annotations

import time

import msgspec
import pytest
from click.testing import CliRunner

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame
from services.engine.service import Engine
from services.cli.archive import command as archive_command
from services.history import archive as archiving
from services.history import record as records
from services.history.verify import verify_record
from services.store import keys
from services.store.codec import encoder
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio


async def keys_of(client, game_id: str) -> list[bytes]:
    return sorted([k async for k in client.scan_iter(match=f"*{game_id}*")])


async def open_game(events, game_id: str = "still-open") -> None:
    engine = Engine(events, RedisEventStore(events))
    [reply] = await engine.handle([CommandEnvelope("c", game_id, msgspec.Raw(encoder.encode(
        CreateGame("yspahan", "open", 2))))])
    assert reply.status == "accepted"


async def test_finished_games_older_than_the_retention_become_records_and_leave_a_tombstone(stores, finished, tmp_path):
    events, views = stores
    await open_game(events)
    listed = await views.zrange(keys.lobby_index(0), 0, -1)
    assert set(finished) <= {g.decode() for g in listed}
    for game_id in finished:  # who was there (the gateways' presence, a read model of its own): goes too
        await views.hset(keys.presence(game_id), mapping={"0": "1.0", "0|http": "61.0"})
    report = await archiving.archive(events, views, 3600, tmp_path, now=time.time() + 7200)
    assert sorted(report.archived) == sorted(finished) and not report.failed and report.skipped == 1, report
    for game_id in finished:
        record = records.decode((tmp_path / f"{game_id}.souk.json").read_bytes())
        assert records.verify(record) == [] and record.header.game_id == game_id
        assert record.commands and verify_record(record).ok  # its commands, re-run by the rules
        assert await keys_of(events, game_id) == [] and await keys_of(views, game_id) == []
        assert await events.zscore(keys.games(0), game_id) is None
        assert not await views.hexists(keys.game_lobby(game_id), game_id)
        for key in [k async for k in views.scan_iter(match="souk:{p*}:lobby*")]:
            if await views.type(key) == b"zset":
                assert await views.zscore(key, game_id) is None, key
        stone = await archiving.tombstone(events, game_id)
        assert stone.record == f"{game_id}.souk.json" and stone.events == record.header.events
        assert len(await events.hget(archiving.ARCHIVED, game_id)) < 200
        error = await archiving.archived(events, game_id)  # history's own error: the gateway answers 410 with it
        assert error.code == "archived" and error.tombstone == stone and stone.record in error.message
    assert await events.exists(keys.game_stream("still-open"))  # not finished: kept
    assert await archiving.archived(events, "still-open") is None
    assert await archiving.tombstone(events, "never-existed") is None


async def test_games_that_ended_within_the_retention_are_kept(stores, finished, tmp_path):
    events, views = stores
    report = await archiving.archive(events, views, 3600, tmp_path)
    assert report.archived == [] and not report.failed
    store = RedisEventStore(events)
    ended = min([(await store.read(g))[-1].recorded_at for g in finished])
    await store.aclose()
    # created before the cutoff, ended just after it
    report = await archiving.archive(events, views, 3600, tmp_path, now=ended + 3600 - 0.01)
    assert report.archived == [] and not report.failed and report.skipped == len(finished)
    assert all([await events.exists(keys.game_stream(g)) for g in finished]) and not list(tmp_path.iterdir())


async def test_a_record_that_does_not_verify_once_written_leaves_its_game_in_place(stores, finished, tmp_path,
                                                                                   monkeypatch):
    events, views = stores
    monkeypatch.setattr(records, "verify", lambda record: ["the disk flipped a bit"])
    report = await archiving.archive(events, views, 0, tmp_path, now=time.time() + 10)
    assert report.archived == [] and set(report.failed) == set(finished)
    assert "does not verify" in report.failed[finished[0]]
    for game_id in finished:
        assert await events.exists(keys.game_stream(game_id), keys.seed(game_id), keys.head(game_id)) == 3
        assert await views.hexists(keys.game_lobby(game_id), game_id)
        assert await archiving.tombstone(events, game_id) is None


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * 86400), ("12h", 43200), ("1d12h", 129600),
                                               ("90m", 5400), ("45s", 45), ("2w", 1209600), ("0", 0.0)])
def test_a_duration_is_read_in_its_units(text, seconds):
    assert archiving.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "12x", "1d 2h", "-3d", "h"])
def test_a_duration_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError, match="a duration is like"):
        archiving.parse_duration(text)


def test_the_command_archives_with_the_environments_stores_and_refuses_a_bad_duration(redis_url, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.delenv("SOUK_VIEWS_REDIS_URL", raising=False)
    runner = CliRunner()
    away = runner.invoke(archive_command, ["--older-than", "30d", "--redis-url", "redis://127.0.0.1:1"])
    assert away.exit_code == 1 and "Traceback" not in away.output and away.output.count("\n") == 1, away.output
    bad = runner.invoke(archive_command, ["--older-than", "soon", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "a duration is like" in bad.output
    done = runner.invoke(archive_command, ["--older-than", "30d", "--out", str(tmp_path / "records")])
    assert done.exit_code == 0, done.output
    assert "archived 0 games" in done.output


async def test_a_rebuild_that_read_a_game_before_it_was_archived_leaves_none_of_its_read_models(stores, finished,
                                                                                                 tmp_path):
    """souk projections rebuild and souk archive at once: the rebuild reads a finished game's stream, the archive
    then removes the game (its tombstone, its keys), and the rebuild writes the read models it projected. They
    must not stay: the lobby would list a game that answers 410 archived."""
    from services.projector.service import Projector

    events, views = stores
    store = RedisEventStore(events)
    projector = Projector(views, store)
    read = store.read
    archived = []

    async def read_then_archived(game_id: str, *args, **kwargs):
        envelopes = await read(game_id, *args, **kwargs)
        if game_id == finished[0] and not archived:  # the archive runs between the read and the write
            archived.append(await archiving.archive(events, views, 3600, tmp_path, now=time.time() + 7200))
        return envelopes

    store.read = read_then_archived
    try:
        await projector.rebuild()
    finally:
        await projector.aclose()
        await store.aclose()
    assert archived and finished[0] in archived[0].archived
    for game_id in finished:
        assert await keys_of(views, game_id) == [], game_id
        assert not await views.hexists(keys.game_lobby(game_id), game_id)


async def test_archiving_a_game_removes_its_refusals_from_the_refusals_index(stores, finished, tmp_path):
    """(issue #18, item 13: 334 entries of an archived Samarkand game were left in souk:refusals.)"""
    events, views = stores
    game_id = finished[0]
    engine = Engine(events, RedisEventStore(events))
    for n in range(3):  # a command to a finished game: refused, and its refusal kept for SOUK_REFUSAL_TTL_S
        [reply] = await engine.handle([CommandEnvelope(f"late-{n}", game_id, msgspec.Raw(b'{"type":"nothing"}'),
                                                       seat=0)])
        assert reply.status == "rejected"
    await engine.store.aclose()
    mine = [m for m in await events.zrange(keys.refusals(0), 0, -1) if m.startswith(f"{game_id}\n".encode())]
    assert len(mine) >= 3
    others = {m for m in await events.zrange(keys.refusals(0), 0, -1) if not m.startswith(f"{game_id}\n".encode())}
    report = await archiving.archive(events, views, 0, tmp_path, now=time.time() + 10)
    assert game_id in report.archived, report
    left = await events.zrange(keys.refusals(0), 0, -1)
    assert not [m for m in left if m.startswith(f"{game_id}\n".encode())]
    assert {m for m in left if any(m.startswith(f"{g}\n".encode()) for g in report.archived)} == set()
    assert others - {m for m in others if any(m.startswith(f"{g}\n".encode()) for g in report.archived)} <= set(left)
