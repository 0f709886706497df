"""``souk bench pushes``: the bytes a WebSocket push carries for each game, whole views and JSON Patch frames.

Plays ``games`` seeded games of each title through the platform's decider in this process (each awaited seat picks
with the ``seeker`` strategy: the game's own bot where it has one, 1001 Karawane's, else a random legal command;
``max_commands`` caps a game), and after every command builds every audience's TableView exactly as the projector
stores it (``domain.table.views``, the store's encoder). A push without patches carries that view whole; with
``?patch=1`` it carries the frame ``services.gateway.fanout.step`` makes, once per audience and change (the patch
from the audience's previous view, or the view whole when the patch is not smaller). Figures per title: pushes
(audiences x commands), bytes per push whole and patched (mean, p50, max), their ratio, and the CPU time of the
gateway's ``step`` per audience and change (p50, p99). The gateway splices the seats' presence into each view
(a few dozen bytes): not counted here.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from services.bench.pipeline import DEFAULT_SEATS
from services.bots import strategy
from services.gateway import fanout
from services.store.codec import encoder


def _started(game: Any, seats: int, seed: bytes) -> tbl.Table:
    table = tbl.EMPTY
    commands = [tbl.newest_rules(CreateGame(game=game.name, title="bench", seats=seats, options={}))]
    commands += [JoinSeat(name=f"p{seat}", token_hash=f"{seat:064x}") for seat in range(seats)]
    for command in commands:
        for event in tbl.decide(table, None, None, command, Chance(seed, table.version)):
            table = tbl.evolve(table, event)
    return table


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_pushes(titles: dict[str, int] | None = None, games: int = 3, seed: int = 1,
                 max_commands: int = 5000) -> dict[str, Any]:
    titles = titles or dict(DEFAULT_SEATS)
    bot = strategy("seeker")
    out: dict[str, Any] = {"titles": {}, "command": f"souk bench pushes --games {games} --seed {seed}"}
    for name, seats in titles.items():
        game = get_game(name)
        whole: list[int] = []
        patched: list[int] = []
        costs: list[float] = []
        commands = ended = 0
        for n in range(games):
            rng = random.Random(seed * 1000 + n)
            secret = (seed * 1000 + n).to_bytes(8, "big")
            table = _started(game, seats, secret)
            last: dict[Any, tuple[fanout.Step, bytes]] = {}
            for _ in range(max_commands):
                if table.status != tbl.PLAYING:
                    break
                seat = rng.choice(tbl.flow(table).awaiting)
                command = bot.choose(game, table.state, seat, rng)
                for event in tbl.decide(table, seat, f"{seat:064x}", command, Chance(secret, table.version)):
                    table = tbl.evolve(table, event)
                commands += 1
                for audience, view in tbl.views(table, "bench-game").items():
                    raw = encoder.encode(view)
                    before = last.get(audience)
                    started = time.perf_counter()
                    step = fanout.step(before[0] if before else None, before[1] if before else None, view.version,
                                       raw)
                    if before is not None:  # the first view of a socket is whole either way
                        costs.append(time.perf_counter() - started)
                        whole.append(len(raw))
                        patched.append(len(step.patch.encode()) if step.patch is not None else len(raw))
                    last[audience] = (step, raw)
            ended += table.status == tbl.OVER
        out["titles"][name] = {
            "seats": seats, "games": games, "ended": ended, "commands": commands, "pushes": len(whole),
            "whole_mean": round(statistics.fmean(whole)), "whole_p50": round(_pct(whole, 0.5)), "whole_max": max(whole),
            "patch_mean": round(statistics.fmean(patched)), "patch_p50": round(_pct(patched, 0.5)),
            "patch_max": max(patched), "ratio": round(statistics.fmean(patched) / statistics.fmean(whole), 3),
            "step_p50_us": round(_pct(costs, 0.5) * 1e6, 1), "step_p99_us": round(_pct(costs, 0.99) * 1e6, 1),
        }
    return out
