"""``souk bench peer``: Souk against the peer a frontend team would pick instead, boardgame.io 0.50.2 (issue #21).

The peer: boardgame.io's own ``Server`` (its default in-memory storage, its socket.io transport, its Lobby API) in
one Node process, and its own clients (``boardgame.io/client`` over ``boardgame.io/multiplayer``'s SocketIO, every
seat its own Client and connection) in another; the JavaScript is ``peer_js/`` (package data), installed with
``npm ci`` from the committed ``package-lock.json`` into a cache folder the first time. The game is the most
minimal 4-player game (``peer_js/game.mjs``): one move, ``tick``, one move a turn, server-side only
(``client: false``: a seat's state changes when the server's update arrives, no optimistic update); each seat moves
as soon as its state says it is its turn; a match ends after ``--peer-moves`` moves (about a random Samarkand game's
length) and a new one is created and joined through the Lobby API, as Souk's drivers create new games.

Souk: ``souk bench http --mode play --send ws`` (services/bench/http.py) with the same N, every seat its own client
(its commands sent as frames on the WebSocket its view is pushed on, as the peer's clients send their moves on
their socket.io connection; ``--souk-send http``: POSTed), the event store's ``appendfsync always``. Souk has no game as minimal as the
peer's: it plays Samarkand with 4 seats, each command a random legal command of the newest view (the cheapest real
game: its commands are a real rulebook's).

Both sides run interleaved (peer N=1, Souk N=1, peer N=16, ... then again for each round) on the same machine;
latency is, on both sides, from the move or command sent to the mover receiving its new state (boardgame.io: the
Client's state with a newer ``_stateID``; Souk: the seat's pushed view of the accepted version). CPU per move:
/proc/<pid>/stat (utime + stime) over the measured window, for the peer's Node server and for every Souk process,
both redis-servers included.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path

from services.bench import BenchError
from services.bench.http import _pct as _pct_ms  # a sorted list's percentile, in ms
from services.bench.pipeline import _process_cpu as _proc_cpu

PEER = "boardgame.io 0.50.2"
JS_FILES = ("package.json", "package-lock.json", "game.mjs", "server.mjs", "clients.mjs", "output.mjs")
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "souk" / "peer"
SOUK_GAME, SOUK_SEATS = "samarkand", 4


# --- the peer's install ------------------------------------------------------------------------------------------

def install(cache: Path, timeout: float = 600) -> Path:
    """The peer's JavaScript in ``cache`` (copied from the package) and its node_modules (``npm ci`` when the
    lock file changed or they are absent); returns the folder."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise BenchError(f"`souk bench peer` needs {tool} on PATH (Node 18 or newer) to run boardgame.io")
    source = resources.files("services.bench") / "peer_js"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for name in JS_FILES:
            data = (source / name).read_bytes()
            target = cache / name
            if not target.exists() or target.read_bytes() != data:
                target.write_bytes(data)
    except OSError as exc:
        raise BenchError(f"cannot write boardgame.io's cache folder {cache}: {exc.strerror or exc}") from None
    lock = hashlib.sha256((cache / "package-lock.json").read_bytes()).hexdigest()
    stamp = cache / "node_modules" / ".souk-lock-sha256"
    if not stamp.exists() or stamp.read_text() != lock:
        try:
            done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=cache,
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise BenchError(f"npm ci in {cache} took more than {timeout:g} s") from None
        if done.returncode != 0:
            raise BenchError(f"npm ci in {cache} failed (is the npm registry reachable?):\n{done.stderr[-2000:]}")
        stamp.write_text(lock)
    return cache


def ended(process: subprocess.Popen | None) -> None:
    """A bench's child process stopped (terminated, killed after 10 s) and its pipes closed."""
    if process is None:
        return
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def move_figures(latencies: list[float], seconds: float) -> dict:
    """Moves, moves/s and latency p50/p99 (ms) of a measured window, from its moves' latencies (seconds)."""
    ordered = sorted(latencies)
    return {"moves": len(ordered), "moves_per_s": round(len(ordered) / seconds, 1),
            "p50_ms": _pct_ms(ordered, 0.50), "p99_ms": _pct_ms(ordered, 0.99)}


# --- one run of the peer -----------------------------------------------------------------------------------------

def run_peer(cache: Path, matches: int, seconds: float, warmup: float, moves: int) -> dict:
    """boardgame.io's server and clients, ``matches`` matches at once; the figures of the measured window."""
    from services.embedded.redis import die_with_parent, free_port

    port = free_port()
    env = {**os.environ, "NODE_ENV": "production"}
    env.pop("FLATFILE_DIR", None)
    # their logs go to files: a pipe nobody reads while the run lasts would stop a process that fills it
    server_log, clients_log = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")

    def tail(log) -> str:
        log.seek(0)
        return log.read()[-2000:]

    server = subprocess.Popen(["node", "server.mjs", str(port), str(moves)], cwd=cache, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=server_log, text=True,
                              preexec_fn=die_with_parent)
    clients = None
    try:
        line = server.stdout.readline()
        if not line.startswith("listening"):
            server.kill()
            server.wait()
            raise BenchError(f"boardgame.io's server did not start: {line}{tail(server_log)}")
        clients = subprocess.Popen(["node", "clients.mjs", f"http://127.0.0.1:{port}", str(matches), str(moves)],
                                   cwd=cache, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=clients_log, text=True, preexec_fn=die_with_parent)
        ready = clients.stdout.readline()
        if ready.strip() != "ready":
            clients.kill()
            clients.wait()
            raise BenchError(f"boardgame.io's clients did not start: {ready}{tail(clients_log)}")
        start = time.monotonic() + warmup
        end = start + seconds
        clients.stdin.write(f"{start} {end}\n")
        clients.stdin.flush()
        time.sleep(max(0.0, start - time.monotonic()))
        before = _proc_cpu(server.pid), _proc_cpu(clients.pid)
        time.sleep(max(0.0, end - time.monotonic()))
        after = _proc_cpu(server.pid), _proc_cpu(clients.pid)
        try:
            out, _ = clients.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            clients.kill()
            raise BenchError("boardgame.io's clients did not finish within 60 s of the window's end") from None
        try:
            result = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BenchError(f"boardgame.io's clients printed no figures: {out[-500:]}{tail(clients_log)}") from None
        server_log.seek(0)
        # boardgame.io logs each move it refuses (`ERROR: invalid stateID ...`, `ERROR: disallowed move ...`)
        refused = [line.strip() for line in server_log if line.startswith("ERROR")]
    finally:
        for process in (clients, server):
            ended(process)
        server_log.close()
        clients_log.close()
    if result["errors"]:
        raise BenchError(f"boardgame.io's clients failed: {result['errors']}")
    count = len(result["latencies"])
    server_cpu, clients_cpu = after[0] - before[0], after[1] - before[1]
    return {**move_figures(result["latencies"], seconds), "stalls": result["stalls"], "refused": len(refused),
            "refused_first": refused[:3],
            "matches_finished": result["matches_finished"],
            "server_cpu_us_per_move": round(server_cpu / max(1, count) * 1e6),
            "server_cpu_cores": round(server_cpu / seconds, 2),
            "clients_cpu_us_per_move": round(clients_cpu / max(1, count) * 1e6)}


def peer_round(folder: Path, matches: int, seconds: float, warmup: float, moves: int, round_: int,
               progress=None) -> dict:
    """One run of the peer, as a row of a bench's ``runs`` (``progress(text)`` told its figures)."""
    peer = run_peer(folder, matches, seconds, warmup, moves)
    if progress:
        progress(f"round {round_} N={matches} peer: {peer['moves_per_s']} moves/s, p50 {peer['p50_ms']} ms, "
                 f"p99 {peer['p99_ms']} ms, server {peer['server_cpu_us_per_move']} µs/move, clients "
                 f"{peer['clients_cpu_us_per_move']}")
    return {"round": round_, "matches": matches, "side": "peer", **peer}


# --- one run of Souk ---------------------------------------------------------------------------------------------

SOUK_PROCESSES = ("serve", "gateway", "engine", "projector", "redis_events", "redis_views")


def run_souk(matches: int, seconds: float, warmup: float, target: str, seed: int, send: str = "ws") -> dict:
    """``souk bench http --mode play --send {send}`` with ``matches`` Samarkand games of 4 seats, fsync always."""
    from services.bench.http import run_bench

    figures = run_bench({"mode": "play", "target": target, "gateways": 1, "url": None, "game": SOUK_GAME,
                         "seats": SOUK_SEATS, "games": matches, "sockets": 0, "seconds": seconds, "warmup": warmup,
                         "rate": 0.0, "drivers": 1, "at_once": False, "fsync": "always", "seed": seed,
                         "send": send})
    if figures["errors"]:
        raise BenchError(f"souk bench http failed: {figures['errors']}")
    if figures["event_store_appendfsync"] != "always":  # the condition: every accepted move on disk
        raise BenchError(f"the event store ran with appendfsync {figures['event_store_appendfsync']}, not always")
    per = figures["cpu_us_per_command"]
    server = {k: per[k] for k in SOUK_PROCESSES if k in per}
    return {"commands": figures["commands"], "commands_per_s": figures["commands_per_s"],
            "p50_ms": figures["p50_ms"], "p99_ms": figures["p99_ms"], "stalls": figures["stalls"],
            "rejected": figures["rejected"], "games_finished": figures["games_finished"],
            "server_cpu_us_per_command": sum(server.values()), "cpu_us_per_command": server,
            "server_cpu_cores": round(sum(v for k, v in figures["cpu_cores"].items() if k in SOUK_PROCESSES), 2),
            "clients_cpu_us_per_command": per.get("drivers", 0),
            "redis_calls_per_command": figures.get("redis_calls_per_command", {}),
            "pushes_per_command": figures.get("pushes_per_command"), "bytes_per_push": figures.get("bytes_per_push"),
            "event_store_appendfsync": figures["event_store_appendfsync"], "bench_http": figures["command"],
            "send": figures["send"]}


# --- interleaved -------------------------------------------------------------------------------------------------

SENT = {"ws": "each seat's commands sent on the WebSocket its view is pushed on (souk.Command frames)",
        "http": "each seat's commands POSTed, its view pushed on its WebSocket"}

def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def run_peer_bench(matches: tuple[int, ...], seconds: float, warmup: float, rounds: int, cache: Path,
                   target: str = "split", moves: int = 400, seed: int = 1, progress=None, send: str = "ws") -> dict:
    """Peer and Souk for each N in ``matches``, interleaved (peer N, Souk N, peer next N, ...), ``rounds`` times;
    per N the median of the rounds' figures. ``progress(text)`` is told each run's result as it comes. ``send``:
    how Souk's seats send their commands (``ws``: on their WebSockets; ``http``: POSTs)."""
    folder = install(cache)
    load_before = os.getloadavg()
    runs: list[dict] = []
    for r in range(rounds):
        for n in matches:
            runs.append(peer_round(folder, n, seconds, warmup, moves, r + 1, progress))
            souk = run_souk(n, seconds, warmup, target, seed + r, send)
            runs.append({"round": r + 1, "matches": n, "side": "souk", **souk})
            if progress:
                progress(f"round {r + 1} N={n} souk: {souk['commands_per_s']} commands/s, p50 {souk['p50_ms']} ms, "
                         f"p99 {souk['p99_ms']} ms, server {souk['server_cpu_us_per_command']} µs/command")
    table = []
    for n in matches:
        peer = [x for x in runs if x["matches"] == n and x["side"] == "peer"]
        souk = [x for x in runs if x["matches"] == n and x["side"] == "souk"]
        peer_rate = _median([x["moves_per_s"] for x in peer])
        souk_rate = _median([x["commands_per_s"] for x in souk])
        processes = {k: round(_median([x["cpu_us_per_command"].get(k, 0) for x in souk]))
                     for k in SOUK_PROCESSES if any(k in x["cpu_us_per_command"] for x in souk)}
        table.append({
            "matches": n, "peer_moves_per_s": peer_rate, "souk_commands_per_s": souk_rate,
            "ratio": round(souk_rate / peer_rate, 2) if peer_rate else 0.0,
            "peer_p50_ms": _median([x["p50_ms"] for x in peer]), "peer_p99_ms": _median([x["p99_ms"] for x in peer]),
            "souk_p50_ms": _median([x["p50_ms"] for x in souk]), "souk_p99_ms": _median([x["p99_ms"] for x in souk]),
            "peer_server_cpu_us_per_move": round(_median([x["server_cpu_us_per_move"] for x in peer])),
            "souk_server_cpu_us_per_command": round(_median([x["server_cpu_us_per_command"] for x in souk])),
            "souk_cpu_us_per_command": processes,
            "peer_clients_cpu_us_per_move": round(_median([x["clients_cpu_us_per_move"] for x in peer])),
            "souk_clients_cpu_us_per_command": round(_median([x["clients_cpu_us_per_command"] for x in souk])),
            "stalls": sum(x["stalls"] for x in peer + souk),
            "peer_refused": sum(x["refused"] for x in peer),  # moves boardgame.io's server refused (logged)
        })
    return {
        "peer": f"{PEER}: its Server (in-memory storage, socket.io) and its Clients (socket.io), a 4-seat game of "
                f"one server-side move a turn (peer_js/game.mjs), matches of {moves} moves",
        "souk": f"souk bench http --mode play --target {target} --game {SOUK_GAME} --seats {SOUK_SEATS} "
                f"--send {send}, appendfsync always: Samarkand's random legal commands (Souk has no game as minimal "
                f"as the peer's), {SENT[send]}",
        "souk_send": send,
        "latency": "move or command sent -> the mover receives its new state (p50/p99: median of the rounds')",
        "seconds": seconds, "warmup": warmup, "rounds": rounds, "cache": str(folder),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "table": table, "runs": runs,
        "command": (f"souk bench peer --matches {','.join(map(str, matches))} --seconds {seconds:g} "
                    f"--warmup {warmup:g} --rounds {rounds} --target {target} --peer-moves {moves} "
                    f"--souk-send {send}"),
    }


def format_table(result: dict) -> str:
    """The table ``souk bench peer`` prints."""
    lines = [f"peer: {result['peer']}", f"souk: {result['souk']}", f"latency: {result['latency']}",
             f"{result['rounds']} round(s) of {result['seconds']:g} s measured after {result['warmup']:g} s, "
             f"load average {result['load_average_before']} before, {result['load_average_after']} after", ""]
    head = (f"{'N':>4} {'peer moves/s':>12} {'souk cmd/s':>10} {'ratio':>5} {'peer p50/p99 ms':>16} "
            f"{'souk p50/p99 ms':>16} {'peer µs/move':>12} {'souk µs/cmd':>11}  souk µs/cmd by process")
    lines.append(head)
    for row in result["table"]:
        by = ", ".join(f"{k} {v}" for k, v in row["souk_cpu_us_per_command"].items())
        lines.append(f"{row['matches']:>4} {row['peer_moves_per_s']:>12,.0f} {row['souk_commands_per_s']:>10,.0f} "
                     f"{row['ratio']:>5.2f} {row['peer_p50_ms']:>7.1f} / {row['peer_p99_ms']:<6.1f} "
                     f"{row['souk_p50_ms']:>7.1f} / {row['souk_p99_ms']:<6.1f} "
                     f"{row['peer_server_cpu_us_per_move']:>12,} {row['souk_server_cpu_us_per_command']:>11,}  {by}")
    lines.append(f"command: {result['command']}")
    return "\n".join(lines)
