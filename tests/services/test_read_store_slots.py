"""Every Lua script and MULTI/EXEC Souk sends to the read store declares its keys, and they hash to one Redis Cluster
slot for each call (issue #22): a game's read models and its partition's lobby carry the partition's hash tag, a
client's and a seat token's rate-limit keys a tag of their own. Checked over what the services send while two games
of four partitions are played (tests/services/read_store_calls.py): the keys of each call are those the server
names (``COMMAND GETKEYS``), their slots redis-py's ``key_slot``. Every other command sent to the read store with
several keys (an MGET of positions, say) is held to one slot too: a cluster refuses it otherwise."""

from __future__ import annotations

import pytest
import redis
import redis.asyncio as aioredis
from redis.crc import key_slot

from tests.services.read_store_calls import READ_STORE, Recorder, play

pytestmark = pytest.mark.anyio


def keys_of(client: redis.Redis, command: tuple) -> list[bytes]:
    """The keys the server finds in ``command`` (none for a command without keys: PUBLISH, SCRIPT LOAD...); a
    script call's are its declared ones (GETKEYS of an EVALSHA wants the script loaded)."""
    name = command[0].decode() if isinstance(command[0], bytes) else str(command[0])
    if name.upper() in ("EVAL", "EVALSHA"):
        return [k if isinstance(k, bytes) else str(k).encode() for k in command[3:3 + int(command[2])]]
    try:
        return [k if isinstance(k, bytes) else str(k).encode() for k in client.command_getkeys(*command)]
    except redis.ResponseError:
        return []


async def test_each_read_store_script_and_transaction_keeps_its_keys_in_one_slot_with_four_partitions(
        redis_url, views_url, monkeypatch):
    recorder = Recorder()
    recorder.install(monkeypatch)
    events, views = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(views_url)
    try:
        await play(events, views)
    finally:
        await events.aclose()
        await views.aclose()
    monkeypatch.undo()

    server = redis.Redis.from_url(views_url)
    try:
        seen = set()
        for sent in recorder.sent:
            found = [k for command in sent.commands for k in keys_of(server, command)]
            name = sent.script
            if name is not None:
                seen.add(name)
                assert found, f"{name} declares no key"
            what = name or [c[0] for c in sent.commands]
            assert len({key_slot(k) for k in found}) <= 1, (what, found)
        assert seen == READ_STORE
        assert len(recorder.multis()) >= 3  # the history's read, the chaos check's, the archive's removal
        assert all(len({key_slot(k) for c in m.commands for k in keys_of(server, c)}) == 1
                   for m in recorder.multis())
        slots = {key_slot(k) for s in recorder.scripts() for c in s.commands for k in keys_of(server, c)}
        assert len(slots) >= 4, "the calls all went to a few slots: the games' partitions, the client's, the token's"
    finally:
        server.close()
