"""`souk bench floor`: the durable echo appends every move before anyone hears of it, ignores a move out of turn,
and the bench prints it beside boardgame.io (short runs; the long one is in the README)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
import redis
from click.testing import CliRunner

from services.bench.floor import run_echo, rules_share
from services.bench.http import Socket
from services.cli.bench import floor as bench
from services.embedded.redis import RedisServer, die_with_parent, free_port
from services.store import keys
from tests.services.test_bench_peer import beside_the_peer


@pytest.fixture
def echo(tmp_path):
    store = RedisServer(tmp_path / "events", appendonly=True, fsync="always").start()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "services.bench.floor", str(port), store.url],
                              stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    try:
        assert server.stdout.readline().startswith("listening")
        yield port, redis.Redis(port=store.port)
    finally:
        server.terminate()
        server.wait(timeout=10)
        store.stop()


def test_each_state_a_seat_hears_follows_its_move_in_the_stream_and_a_move_out_of_turn_is_ignored(echo):
    port, store = echo
    heard: dict[int, list[tuple[int, int]]] = {s: [] for s in range(4)}

    async def play() -> None:
        sockets = []
        for seat in range(4):
            def on_text(text: bytes, _arrival: float, seat=seat) -> None:
                # what the stream holds when the state arrives: the append came first
                heard[seat].append((int(text[5:-1]), store.xlen("floor:{m}")))
            sockets.append(await Socket.open("127.0.0.1", port, f"/m/m/{seat}", on_text))
        sockets[1].send_text(b'{"move":"out of turn"}')  # seat 0 moves first: ignored
        await asyncio.sleep(0.2)
        for version in range(8):
            sockets[version % 4].send_text(b'{"move":%d}' % version)
            deadline = time.monotonic() + 5
            while len(heard[0]) <= version and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
        for s in sockets:
            s.close()

    asyncio.run(play())
    assert [v for v, _ in heard[0]] == list(range(1, 9))
    for seat in range(4):  # every seat heard every state, each once its move was in the stream
        assert [v for v, _ in heard[seat]] == list(range(1, 9))
        assert all(length >= v for v, length in heard[seat])
    moves = [fields[b"m"] for _, fields in store.xrange("floor:{m}")]
    assert moves == [b'{"move":%d}' % v for v in range(8)]  # not the move out of turn
    assert store.config_get("appendfsync") == {"appendfsync": "always"}


def test_a_short_run_counts_moves_latencies_and_the_servers_cpu():
    figures = run_echo(2, 1.0, 0.2)
    assert figures["moves"] > 0 and figures["moves_per_s"] == pytest.approx(figures["moves"] / 1.0, abs=0.1)
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] < 5000
    assert figures["appendfsync"] == "always"
    # each rounded apart
    assert figures["server_cpu_us_per_move"] == pytest.approx(
        figures["python_cpu_us_per_move"] + figures["redis_cpu_us_per_move"], abs=1)


def test_the_fused_server_pushes_each_seat_a_view_its_game_stream_already_holds(tmp_path):
    """Souk's parts fused: every command is decided by the engine and appended before any seat is sent the view of
    its version; the views are each seat's own (its seat, the legal commands only where it is awaited)."""
    from services.bench import floor

    store = RedisServer(tmp_path / "events", appendonly=True, fsync="always").start()
    views = RedisServer(tmp_path / "views", appendonly=False).start()
    events = redis.Redis(port=store.port)
    pushed: list[tuple[int, int, int, bool]] = []  # (seat, view's seat, version, legal) as each arrived
    stored: list[tuple[int, int]] = []  # (a view's version, its game stream's length when the view arrived)

    async def main() -> dict:
        fused = floor._Fused(store.url, views.url)
        port = free_port()
        server = await asyncio.get_running_loop().create_server(lambda: floor._ServerSocket(fused), "127.0.0.1",
                                                                port)
        original = Socket.open

        async def spying(host, port_, path, on_text):
            seat = int(path.rsplit("/", 1)[1])

            def on(text: bytes, arrival: float) -> None:
                view = json.loads(text)
                pushed.append((seat, view["seat"], view["version"], bool(view["legal"])))
                stored.append((view["version"], events.xlen(keys.game_stream(view["game_id"]))))
                on_text(text, arrival)
            return await original(host, port_, path, on)

        Socket.open = spying
        try:
            now = time.monotonic()
            played = await floor._play_fused(port, 2, now + 0.3, now + 1.5)
        finally:
            Socket.open = original
            server.close()
        return {"played": played, "outcomes": fused.outcomes}

    try:
        result = asyncio.run(main())
    finally:
        store.stop()
        views.stop()
    assert result["played"]["errors"] == [] and len(result["played"]["latencies"]) > 5
    assert set(result["outcomes"]) == {"accepted"}, result["outcomes"]  # one command in flight a match: none stale
    assert all(length >= version for version, length in stored)  # on disk before it was pushed
    assert all(seat == view_seat for seat, view_seat, _, _ in pushed)  # each socket gets its own seat's view
    assert any(legal for *_, legal in pushed) and not all(legal for *_, legal in pushed)


def test_the_fused_servers_clients_play_on_into_the_next_game_when_one_ends(tmp_path):
    """A Samarkand game lasts a few hundred commands; the server then starts the match's next game. The clients
    kept waiting for a version of the old one (0 commands in a whole 8-second run at 1 match)."""
    from services.bench import floor

    store = RedisServer(tmp_path / "events", appendonly=True, fsync="always").start()

    async def main() -> floor._Fused:
        fused = floor._Fused(store.url, None)
        port = free_port()
        server = await asyncio.get_running_loop().create_server(lambda: floor._ServerSocket(fused), "127.0.0.1",
                                                                port)
        try:
            now = time.monotonic()  # a game is about 400 commands: several games on an idle machine, 2 on a busy one
            await floor._play_fused(port, 1, now, now + 5)
        finally:
            server.close()
        return fused

    try:
        fused = asyncio.run(main())
    finally:
        store.stop()
    games = fused.played
    assert len(games) >= 2 and all(n > 0 for n in games.values()), games


def test_the_rules_share_times_samarkands_decisions_and_views():
    share = rules_share(0.3)
    assert share["commands"] > 0 and share["tables"] > 0
    assert share["decide_fold_us"] > 0 and share["views_us"] > 0


def test_the_command_runs_beside_boardgame_io_and_checks_its_options():
    refused = CliRunner().invoke(bench.command, ["--matches", "0"])
    assert refused.exit_code == 2 and "--matches" in refused.output
    refused = CliRunner().invoke(bench.command, ["--sides", "echo,fast"])
    assert refused.exit_code == 2 and "echo, fused, fused+store" in refused.output
    result = beside_the_peer("services.cli.bench.floor", "--matches", "1", "--seconds", "1", "--warmup", "0.3",
                             "--rounds", "1", "--sides", "echo")
    [row] = result["table"]
    assert [r["side"] for r in result["runs"]] == ["peer", "echo"]  # interleaved
    assert row["peer_moves_per_s"] > 0 and row["echo"]["moves_per_s"] > 0 and row["target_ratio"] == 1.0
    assert row["echo"]["ratio"] == pytest.approx(row["echo"]["moves_per_s"] / row["peer_moves_per_s"], abs=0.01)
    assert row["machine_cpu_us_per_move_at_target"] > 0 and result["rules"]["views_us"] > 0
