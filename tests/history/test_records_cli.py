"""`souk export`, `souk verify FILE`, `souk import` and `souk replay`, as the real command (issue #10 section 4)."""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from click.testing import CliRunner

from services.cli.main import cli
from services.history import record as records
from services.store import keys
from tests.embedded.support import clean_env, souk as souk_process

pytestmark = pytest.mark.anyio


async def souk(*args: str, env=None) -> subprocess.CompletedProcess:
    """`souk ARGS` in this process (click's runner, in a thread: the commands run their own event loop), as a
    finished process: what a real one prints is checked by the test of one-line errors below."""
    done = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(cli, list(args), catch_exceptions=False))
    return subprocess.CompletedProcess(args, done.exit_code, done.stdout, done.stderr)


async def test_export_verify_import_and_replay_from_the_command_line(stores, finished, redis_url, tmp_path):
    events, _ = stores
    env = None
    exported = await souk("export", finished[0], "--redis-url", redis_url, env=env)
    assert exported.returncode == 0, exported.stderr
    path = tmp_path / "game.souk.json"
    path.write_text(exported.stdout)
    record = records.decode(path.read_bytes())
    assert record.header.game_id == finished[0] and record.commands

    verified = await souk("verify", str(path), "--progress", env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"OK: {len(record.events)} events and {len(record.commands)} commands")
    assert "re-running the record" in verified.stderr  # the progress, on stderr
    assert verified.stdout.splitlines()[1] == "not determined by the events, so not checked: the header's archived_at"

    document = json.loads(path.read_text())
    rolled = next(e for e in document["events"] if e["type"] == "yspahan.DiceRolled")
    rolled["payload"]["white"][0] = rolled["payload"]["white"][0] % 6 + 1
    tampered = tmp_path / "tampered.souk.json"
    tampered.write_text(json.dumps(document, separators=(",", ":")))
    refused = await souk("verify", str(tampered), env=env)
    assert refused.returncode == 1
    assert refused.stdout.startswith(f"event {rolled['seq']} (yspahan.DiceRolled) differs from what the rules give")

    games = await events.zcard(keys.games(0))
    not_imported = souk_process("import", str(tampered), "--redis-url", redis_url, env=clean_env())  # the real one
    assert not_imported.returncode == 1 and not_imported.stdout == ""
    assert not_imported.stderr.strip().startswith(f"souk: {tampered}: not imported: the record does not verify: "
                                                  f"event {rolled['seq']}")
    assert len(not_imported.stderr.strip().splitlines()) == 1 and await events.zcard(keys.games(0)) == games

    imported = await souk("import", str(path), "--redis-url", redis_url, env=env)
    assert imported.returncode == 0, imported.stderr
    copy = imported.stdout.strip()
    again = await souk("export", copy, "--redis-url", redis_url, env=env)
    assert records.decode(again.stdout.encode()).header.imported_from == finished[0]

    end = await souk("replay", str(path), env=env)
    assert end.returncode == 0, end.stderr
    scores = ", ".join(f"seat {i} {s}" for i, s in enumerate(record.header.result["scores"]))
    assert f"at version {len(record.events)} of {len(record.events)}: over" in end.stdout
    assert f"scores: {scores}" in end.stdout
    middle = await souk("replay", str(path), "--to", "40", "--json", env=env)
    assert middle.returncode == 0, middle.stderr
    shown = json.loads(middle.stdout)
    assert shown["version"] == 40 and shown["status"] == "playing" and len(shown["scores"]) == 2
    assert (await souk("replay", str(path), "--to", str(len(record.events) + 1), env=env)).returncode == 2


async def test_exporting_a_game_that_is_not_there_says_so(redis_url):
    done = await souk("export", "no-such-game", "--redis-url", redis_url)
    assert done.returncode == 1 and "no game 'no-such-game' here" in done.stderr
