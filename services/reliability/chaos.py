"""``souk chaos``: the real processes under load and faults, then the proof that nothing went wrong.

A run starts the cluster (``services.reliability.cluster``), drives games over HTTP (``...driver``), and injects
one fault at a time at random moments, each once recovered from: kill -9 of an engine, of the projector, of the
gateway (each restarted, as a supervisor would), kill -9 of the event store's Redis (restarted on its port and
data directory), the event store restarted and LOADING its data for a couple of seconds, the event store out of
memory (``maxmemory`` reached under ``noeviction``: every write refused) for a few seconds, FLUSHDB of the read
store, and a second engine started or killed. No HTTP answer of the run may be a 500 (``http_500``): a store's
refusal is a 503 ``store_unavailable``. Recovery is the time from the
fault to the first command sent after it that is accepted and then seen in its seat's view. When the time is up,
the load stops, every command still unanswered is resent until answered, and ``...checks`` runs.

With ``redis_cluster`` (``souk chaos --cluster``) the event store is a local Redis Cluster (three primaries with a
replica each, AOF fsynced on every write) holding ``partitions`` partitions, and the event store's faults are a
cluster's: a primary killed -9 (its replica takes over; the killed node, restarted, comes back as a replica), a
replica killed -9 and restarted, a primary out of memory for a few seconds; the processes' faults and the read
store's flush stay. The checks are the same, and the cluster must be whole again at the end (every node up, every
primary with its replica).

``run_chaos(Config(...))`` returns the figures (a dict); ``souk chaos`` prints them (``--json``: one object).
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.reliability.cluster import ENGINE, GATEWAY, PROJECTOR, Cluster, OnRedisCluster
from services.store import keys

FAULTS = ("engine_kill", "projector_kill", "gateway_kill", "event_store_kill", "event_store_loading",
          "event_store_oom", "read_store_flush", "engine_pair")
# With the event store on a Redis Cluster (``Config.redis_cluster``): its node's faults instead of one Redis's.
CLUSTER_FAULTS = ("engine_kill", "projector_kill", "gateway_kill", "primary_kill", "replica_kill", "primary_oom",
                  "read_store_flush", "engine_pair")
# Problems that fail a run (every kind checks counts; see services/reliability/checks.py).
MUST_BE_ZERO = ("lost", "duplicated", "unanswered", "conflicting", "unknown", "chain", "redecision", "read_models",
                "not_contiguous", "events_stream", "history_length", "outcome_not_recorded", "wrong_seat",
                "wrong_answer", "projection_behind", "history_unavailable", "audit_unavailable")


@dataclass
class Config:
    seconds: float = 600.0  # of load (faults included; longer until every kind has struck); the checks come after
    games: int = 24  # games in play at once
    engines: int = 1  # engines at the start (``engine_pair`` toggles a second one)
    seed: int | None = None
    faults: tuple[str, ...] | None = None  # None: every fault of the store's kind (FAULTS, or CLUSTER_FAULTS)
    fault_gap: tuple[float, float] = (4.0, 12.0)  # seconds between a recovery and the next fault
    warmup: float = 4.0
    race_every: float = 5.0
    probe_rate: float = 0.05
    chosen_seed_rate: float = 0.25
    command_deadline: float = 90.0  # a client resends one command for this long at most
    recovery_timeout: float = 60.0
    reclaim_idle_ms: int = 2000
    data_dir: str | None = None
    keep: bool = False
    progress: bool = False  # a line on stderr every 30 s
    command: str = ""  # how the run was asked for, for the figures
    redis_cluster: bool = False  # the event store on a local Redis Cluster (OnRedisCluster)
    partitions: int = 6  # the event store's, on a cluster (at least its 3 primaries)

    def __post_init__(self) -> None:
        kinds = CLUSTER_FAULTS if self.redis_cluster else FAULTS
        if self.faults is None:
            self.faults = kinds
        unknown = [f for f in self.faults if f not in kinds]
        if unknown:
            raise ChaosConfigError("bad_faults", f"faults {', '.join(unknown)} are not among "
                                   f"{'the cluster' if self.redis_cluster else 'one Redis'}'s: {', '.join(kinds)}")
        if self.redis_cluster and self.partitions < 3:
            raise ChaosConfigError("bad_partitions", f"partitions {self.partitions}: on a cluster at least its 3 "
                                   "primaries, so that every primary holds some")
        if self.seconds <= 0 or self.games < 1:
            raise ChaosConfigError("bad_length", "the time and the games must be positive")


class ChaosConfigError(ValueError):
    """A chaos run asked for with options it cannot run: ``code`` is stable (bad_faults, bad_partitions,
    bad_length)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass
class Fault:
    kind: str
    what: str
    at_s: float  # since the load started
    recovery_s: float | None = None


@dataclass
class Run:
    config: Config
    faults: list[Fault] = field(default_factory=list)
    load_s: float = 0.0  # how long the load ran (``seconds``, or longer until every fault kind struck)


async def run_chaos(config: Config) -> dict[str, Any]:
    from services.reliability.checks import check
    from services.reliability.driver import Driver

    seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    tmp = None
    if config.data_dir:
        data_dir = Path(config.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.mkdtemp(prefix="souk-chaos-")
        data_dir = Path(tmp)
    options = {"engines": config.engines, "reclaim_idle_ms": config.reclaim_idle_ms}
    cluster = (OnRedisCluster(data_dir / "cluster", config.partitions, **options) if config.redis_cluster
               else Cluster(data_dir / "cluster", **options))
    partitions_before = len(keys.PARTITIONS)
    if config.redis_cluster:  # this process reads and checks the store's partitions
        keys.use(config.partitions)
    run = Run(config)
    figures: dict[str, Any] = {"command": config.command, "seed": seed}
    ok = False
    supervisor: asyncio.Task | None = None
    driver = None
    try:
        t0 = time.monotonic()
        await cluster.start()
        figures["startup_s"] = round(time.monotonic() - t0, 2)
        supervisor = asyncio.create_task(cluster.supervise())
        driver = Driver(cluster.url, rng, uuid.uuid4().hex[:6], config.games, chosen_seed_rate=config.chosen_seed_rate,
                        probe_rate=config.probe_rate, race_every=config.race_every,
                        command_deadline=config.command_deadline)
        await driver.catalog()
        started = time.monotonic()
        load = asyncio.create_task(driver.run())
        faults = asyncio.create_task(_faults(cluster, driver, run, rng, started))
        reporter = asyncio.create_task(_progress(driver, run, started)) if config.progress else None
        await asyncio.sleep(config.seconds)
        faults_done = time.monotonic()
        await faults  # the fault under way ends with its recovery (bounded), under load
        stalled = driver.stalled()
        driver.stop()
        figures["seconds"] = run.load_s = round(time.monotonic() - started, 1)
        figures["fault_tail_s"] = round(time.monotonic() - faults_done, 1)
        t_drain = time.monotonic()
        done, _ = await asyncio.wait({load}, timeout=config.command_deadline + 30)
        if not done:
            load.cancel()
            figures["load_stop_timed_out"] = True
        await driver.settle(config.command_deadline + 10)
        figures["drain_s"] = round(time.monotonic() - t_drain, 1)
        if reporter:
            reporter.cancel()
        t_check = time.monotonic()
        if config.redis_cluster:
            figures["redis_cluster"] = {"failovers": cluster.failovers,
                                        "not_whole_at_the_end": await cluster.health()}
        found = await check(cluster.events_url, cluster.views.url, driver.client, driver.ledger, data_dir / "scratch")
        figures["check_s"] = round(time.monotonic() - t_check, 1)
        figures.update(_figures(run, driver, cluster, found))
        figures["games_stalled"] = stalled
        figures["ok"] = (figures["ok"] and not stalled
                         and not figures.get("redis_cluster", {}).get("not_whole_at_the_end"))
        ok = figures["ok"]
        return figures
    finally:
        if supervisor is not None:
            supervisor.cancel()
        if driver is not None:
            await driver.aclose()
        await cluster.stop()
        keys.use(partitions_before)
        if tmp and ok and not config.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            print(f"souk chaos: the run's data and logs are kept in {tmp}", file=sys.stderr)


async def _faults(cluster: Cluster, driver, run: Run, rng: random.Random, started: float) -> None:
    """One fault at a time, each after the previous one's recovery and a random gap, until the time is up and every
    kind has struck once (on a loaded machine the recoveries may not leave room for all of them in ``seconds``: a CI
    run then found a kind never injected, and the load goes on until it is)."""
    config = run.config
    end = started + config.seconds
    await asyncio.sleep(config.warmup)
    for _ in range(600):  # and until the load flows: a command accepted end to end (at most a minute)
        if driver.ledger.e2e or time.monotonic() > end - 2.0:
            break
        await asyncio.sleep(0.1)
    bag: list[str] = []
    first_round = len(config.faults)  # every kind strikes once, past ``seconds`` if the recoveries were slow
    while (time.monotonic() < end - 2.0 or first_round > 0) and config.faults:
        if not bag:  # every kind once, in a random order, then again
            bag = list(config.faults)
            rng.shuffle(bag)
        kind = bag.pop()
        first_round -= 1
        at, cluster.struck_at = time.monotonic(), None
        what = await _inject(cluster, kind, rng)
        at = cluster.struck_at or at  # a fault prepared first (the AOF rewritten before a restart) struck later
        fault = Fault(kind, what, round(at - started, 2))
        run.faults.append(fault)
        fault.recovery_s = await _recovery(driver, at, config.recovery_timeout)
        gap = rng.uniform(*config.fault_gap)
        if time.monotonic() + gap > end - 2.0 and first_round <= 0:
            return
        await asyncio.sleep(gap)


# Each fault kind: the role whose process is killed and restarted, or the Cluster's method that strikes it
_KILLED = {"engine_kill": ENGINE, "projector_kill": PROJECTOR, "gateway_kill": GATEWAY}
_STRIKES = {"event_store_kill": "kill_event_store", "event_store_loading": "event_store_loading",
            "event_store_oom": "event_store_out_of_memory", "primary_kill": "kill_primary",
            "replica_kill": "kill_replica", "primary_oom": "primary_out_of_memory", "engine_pair": "toggle_second_engine"}


async def _inject(cluster: Cluster, kind: str, rng: random.Random) -> str:
    if kind in _KILLED:
        return await cluster.kill_and_restart(_KILLED[kind], rng)
    if kind == "read_store_flush":
        return await cluster.flush_read_store()
    if kind in _STRIKES:
        return await getattr(cluster, _STRIKES[kind])(rng)
    raise ValueError(f"unknown fault {kind!r}; faults: {', '.join(FAULTS)} (a cluster's: {', '.join(CLUSTER_FAULTS)})")


async def _recovery(driver, at: float, timeout: float) -> float | None:
    """Seconds from ``at`` to the first command sent after it, accepted and seen in the views; None if none
    within ``timeout``."""
    deadline = at + timeout
    checked = 0
    while True:
        e2e = driver.ledger.e2e
        for sent, done in e2e[checked:]:
            if sent >= at:
                return round(done - at, 3)
        checked = len(e2e)
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        driver.progress.clear()
        try:
            await asyncio.wait_for(driver.progress.wait(), min(left, 1.0))
        except TimeoutError:
            pass


async def _progress(driver, run: Run, started: float) -> None:
    while True:
        await asyncio.sleep(30)
        ledger = driver.ledger
        accepted = sum(1 for s in ledger.commands.values() if s.accepted)
        print(f"souk chaos: {time.monotonic() - started:.0f} s, {len(ledger.commands)} commands sent, {accepted} "
              f"accepted, {len(run.faults)} faults, {ledger.finished} games finished", file=sys.stderr, flush=True)


def _figures(run: Run, driver, cluster: Cluster, found: dict[str, Any]) -> dict[str, Any]:
    ledger = driver.ledger
    problems: dict[str, int] = found["problems"]
    recoveries = [f.recovery_s for f in run.faults if f.recovery_s is not None]
    by_kind: dict[str, list[float]] = defaultdict(list)
    for f in run.faults:
        if f.recovery_s is not None:
            by_kind[f.kind].append(f.recovery_s)
    not_recovered = [f"{f.kind} at {f.at_s} s" for f in run.faults if f.recovery_s is None]
    crashes = [{"role": c.role, "exit_code": c.exit_code, "tail": c.tail[-1500:]} for c in cluster.crashes]
    out: dict[str, Any] = {
        "games": run.config.games,
        "games_created": sum(1 for c in ledger.creates.values() if c.game_id),
        "games_by_title": dict(Counter(f"{c.game} {c.seats}" for c in ledger.creates.values() if c.game_id)),
        "games_finished": ledger.finished,
        "games_abandoned": dict(ledger.abandoned),
        "commands_sent": found["commands_sent"],
        "requests": ledger.requests,
        "probes": ledger.probes,
        "accepted": found["accepted"],
        "accepted_per_s": round(found["accepted"] / max(1e-9, run.load_s or run.config.seconds), 1),
        "refused": found["refused"],
        "refused_codes": found["refused_codes"],
        "faults": len(run.faults),
        "faults_by_kind": dict(Counter(f.kind for f in run.faults)),
        "lost": problems.get("lost", 0),
        "duplicated": problems.get("duplicated", 0),
        "unanswered": problems.get("unanswered", 0),
        "conflicting": problems.get("conflicting", 0),
        "unknown": problems.get("unknown", 0),
        "chain_problems": problems.get("chain", 0),
        "redecision_mismatches": problems.get("redecision", 0),
        "read_model_mismatches": problems.get("read_models", 0),
        "recovery_max_s": max(recoveries) if recoveries else None,
        "recovery_p50_s": round(statistics.median(recoveries), 3) if recoveries else None,
        "recovery_by_kind": {k: {"max_s": max(v), "p50_s": round(statistics.median(v), 3), "n": len(v)}
                             for k, v in sorted(by_kind.items())},
        "not_recovered": not_recovered,
        "latency_s": {kind: _spread(values) for kind, values in sorted(ledger.latency.items())},
        "races": len(ledger.races),
        "race_accepted": dict(sorted(Counter(ledger.races).items())),
        "creates_tried": found["creates_tried"],
        "creates_applied_unanswered": found["creates_applied_unanswered"],
        "joins_tried": found["joins_tried"],
        "joins_applied_unanswered": found["joins_applied_unanswered"],
        "transport_errors": dict(ledger.transport_errors),
        "answers_by_status": dict(sorted(ledger.statuses.items())),
        "http_500": ledger.statuses.get(500, 0),
        "http_500_examples": ledger.internal_errors,
        "retried_answers": dict(ledger.retried_answers),
        "wrong_answers": dict(ledger.wrong_answers),
        "wrong_answer_examples": ledger.wrong_examples,
        "crashes": crashes,
        "processes_started": cluster.process_counts(),
        "games_in_store": found["games_in_store"],
        "games_finished_in_store": found["games_finished_in_store"],
        "events_in_store": found["events_in_store"],
        "read_models_compared": found["read_models_compared"],
        "projection_settle_s": found["projection_settle_s"],
        "fault_log": [{"kind": f.kind, "what": f.what, "at_s": f.at_s, "recovery_s": f.recovery_s}
                      for f in run.faults],
        "problems": problems,
        "problem_examples": found["problem_examples"],
    }
    out["ok"] = (not any(problems.get(k, 0) for k in MUST_BE_ZERO) and not not_recovered and not crashes
                 and not ledger.wrong_answers and not out["http_500"])
    return out


def _spread(values: list[float]) -> dict[str, float | int]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"p50": at(0.5), "p99": at(0.99), "max": round(ordered[-1], 3), "n": len(ordered)}


# --- what `souk chaos` prints (services/cli/chaos.py) -----------------------------------------------------

SUMMARY = ("startup_s", "seconds", "fault_tail_s", "drain_s", "check_s", "games", "games_created", "games_by_title", "games_finished", "commands_sent", "requests",
           "accepted", "accepted_per_s", "refused", "faults", "faults_by_kind", "lost", "duplicated", "unanswered",
           "conflicting", "unknown", "chain_problems", "redecision_mismatches", "read_model_mismatches",
           "recovery_max_s", "recovery_p50_s", "recovery_by_kind", "not_recovered", "latency_s",
           "races", "race_accepted", "games_abandoned", "games_stalled", "creates_applied_unanswered",
           "joins_applied_unanswered", "transport_errors", "retried_answers", "wrong_answers", "answers_by_status",
           "http_500", "crashes", "redis_cluster", "problems", "ok")


def summary(figures: dict[str, Any]) -> str:
    lines = [f"{k:>26}: {json.dumps(figures[k]) if isinstance(figures[k], (dict, list)) else figures[k]}"
             for k in SUMMARY if k in figures]
    for kind, examples in figures.get("problem_examples", {}).items():
        lines.append(f"{kind}:")
        lines += [f"    {e}" for e in examples]
    for example in figures.get("http_500_examples", []):
        lines.append(f"500: {example}")
    for crash in figures.get("crashes", []):
        lines.append(f"crash of {crash['role']} (exit {crash['exit_code']}):\n{crash['tail']}")
    return "\n".join(lines)
