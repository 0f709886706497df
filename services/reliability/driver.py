"""The load of a chaos run: clients playing many games over HTTP, as real clients would, and the ledger of
everything they sent and every answer they got.

Each game (any title of ``GET /catalog``, any seat count it allows) is created, its seats joined, then each seat
runs a task of its own: it waits for a new version of its view (``?min_version=``), and when the game awaits it,
takes a random command from ``GET .../legal`` and posts it under a command id of its own choosing. A command
that gets no answer (a timeout, a 5xx, a lost connection) is resent under the same id until it gets one, as
a client must. Now and then an answered command is resent once more (a probe: the answer must be the same),
and sixteen writers race on one seat: sixteen different commands, sent at the same moment.

Creating a game and taking a seat carry no id of the client's (the gateway picks them): a create or a join
whose answer is lost cannot be resent, only tried again as a new request. Each try has a title or a name of
its own, so that the checks can tell which try the store holds.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from services.reliability.http import Client, Response, TransportError

ANSWERED = (200, 409, 422)  # the engine decided: accepted, or refused (a conflict code, or a rule)
RACERS = 16
# Codes that ask the client to come back shortly (the gateway's messages say so): 404 view_not_ready (a game's
# views not projected yet, as after the read store is lost), 503 not_projected, 504 engine_timeout, and 429
# rate_limited (then after its Retry-After).
RETRY_CODES = {"view_not_ready", "not_projected", "engine_timeout", "rate_limited"}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Sent:
    """One command id of one seat: the body sent, and every answer it got (status, canonical JSON)."""

    game_id: str
    seat: int
    command_id: str
    body: dict[str, Any]
    requests: int = 0
    answers: list[tuple[int, str]] = field(default_factory=list)
    racer: bool = False
    expected_version: int | None = None  # sent with the command when the gateway takes it
    answered_by: float = 0.0  # when the request that got the first answer was sent (monotonic)

    @property
    def outcome(self) -> tuple[int, str] | None:
        return self.answers[0] if self.answers else None

    @property
    def accepted(self) -> bool:
        return bool(self.answers) and self.answers[0][0] == 200


@dataclass
class CreateTry:
    title: str
    game: str
    seats: int
    seed: str | None
    request_id: str | None = None  # resent under it, when the gateway takes request ids
    game_id: str | None = None  # set when answered 201
    creator_token: str | None = None  # the answer's, when the gateway gives one
    answer: str = ""  # "201", or what came instead


@dataclass
class JoinTry:
    game_id: str
    seat: int
    name: str
    request_id: str | None = None
    token: str | None = None  # set when answered 201
    answer: str = ""


@dataclass
class Ledger:
    commands: dict[tuple[str, int, str], Sent] = field(default_factory=dict)
    creates: dict[str, CreateTry] = field(default_factory=dict)  # by title
    joins: dict[tuple[str, str], JoinTry] = field(default_factory=dict)  # by (game id, name)
    tokens: dict[tuple[str, int], str] = field(default_factory=dict)  # (game id, seat) -> token
    transport_errors: Counter = field(default_factory=Counter)  # exception class -> count
    retried_answers: Counter = field(default_factory=Counter)  # "status code" -> count (5xx, RETRY_CODES: sent again)
    wrong_answers: Counter = field(default_factory=Counter)  # "status code" a correct client should never get
    wrong_examples: list[str] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # every HTTP answer of the load, by status
    internal_errors: list[str] = field(default_factory=list)  # the first 500s: request and answer
    requests: int = 0  # command POSTs, resends and probes included
    probes: int = 0
    races: list[int] = field(default_factory=list)  # how many of each race's 16 commands were accepted
    abandoned: Counter = field(default_factory=Counter)  # games given up, by reason
    finished: int = 0
    e2e: list[tuple[float, float]] = field(default_factory=list)  # (sent, accepted and seen in the views)
    # seconds each request that got a decision took (create, join: 201; command: 200/409/422), resends apart
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def wrong(self, what: str, detail: str) -> None:
        self.wrong_answers[what] += 1
        if len(self.wrong_examples) < 20:
            self.wrong_examples.append(detail[:300])


@dataclass
class Game:
    game_id: str
    game: str
    seats: int
    title: str
    version: int = 0
    status: str = "open"
    changed_at: float = field(default_factory=time.monotonic)
    done: bool = False


def _retry_after(answer: Response | BaseException) -> float:
    """How long a 429 asks the client to wait (its Retry-After, else a second); 0 for any other answer."""
    if isinstance(answer, BaseException) or answer.status_code != 429:
        return 0.0
    try:
        return min(10.0, float(answer.headers.get("retry-after", "1")))
    except ValueError:
        return 1.0


def _describe(answer: Response | BaseException) -> str:
    if isinstance(answer, BaseException):
        return type(answer).__name__
    try:
        code = answer.json().get("code", "")
    except (ValueError, AttributeError):
        code = ""
    return f"{answer.status_code} {code}".strip()


class Driver:
    def __init__(self, url: str, rng: random.Random, run_id: str, games: int, *, chosen_seed_rate: float = 0.25,
                 probe_rate: float = 0.05, race_every: float = 5.0, command_deadline: float = 90.0) -> None:
        self.url = url
        self.rng = rng
        self.run_id = run_id
        self.concurrency = games
        self.chosen_seed_rate = chosen_seed_rate
        self.probe_rate = probe_rate
        self.race_every = race_every
        self.command_deadline = command_deadline
        self.ledger = Ledger()
        self.games: dict[str, Game] = {}
        self.choices: list[tuple[str, int]] = []
        # The titles not created yet: the first games take one each, so that a short run plays every title (a
        # 20-s run of 8 games drew 21 games at random and no Istanbul among them)
        self.titles_unplayed: list[str] = []
        # What the gateway takes (read from its OpenAPI document): request ids on creates and joins, so that one
        # whose answer was lost is resent and answered; the version a command was decided on.
        self.request_ids = False
        self.expected_versions = False
        self.stopping = False
        self.progress = asyncio.Event()  # set at each end-to-end acceptance
        self._counter = 0
        self._background: set[asyncio.Task] = set()
        self.client = Client(url, timeout=20.0, connect_timeout=3.0)

    def _next(self) -> int:
        self._counter += 1
        return self._counter

    async def aclose(self) -> None:
        await self.client.aclose()

    async def call(self, method: str, path: str, **kw: Any) -> Response | BaseException:
        try:
            r = await self.client.request(method, path, **kw)
        except TransportError as exc:
            self.ledger.transport_errors[type(exc).__name__] += 1
            return exc
        self.ledger.statuses[r.status_code] += 1
        if r.status_code == 500 and len(self.ledger.internal_errors) < 20:
            self.ledger.internal_errors.append(f"{method} {path} -> {r.text[:300]}")
        return r

    async def catalog(self, deadline_s: float = 30.0) -> None:
        """Every title of the catalog with every seat count it allows."""
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            r = await self.call("GET", "/catalog")
            if isinstance(r, Response) and r.status_code == 200:
                self.choices = [(g["name"], n) for g in r.json() for n in range(g["min_seats"], g["max_seats"] + 1)]
                self.titles_unplayed = sorted({name for name, _ in self.choices})
                break
            await asyncio.sleep(0.2)
        else:
            raise RuntimeError("GET /catalog did not answer")
        r = await self.call("GET", "/schema/openapi.json")
        if isinstance(r, Response) and r.status_code == 200:
            self.request_ids = b'"request_id"' in r.content
            self.expected_versions = b'"expected_version"' in r.content

    # --- the load ---------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Keeps ``concurrency`` games in play, and a race now and then, until ``stop``."""
        tasks = [asyncio.create_task(self._games_in_a_row()) for _ in range(self.concurrency)]
        tasks.append(asyncio.create_task(self._races()))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()

    def stop(self) -> None:
        self.stopping = True

    def stalled(self, idle_s: float = 45.0) -> list[str]:
        """Games in play whose version no seat has seen move for ``idle_s``: a game the system stopped serving."""
        now = time.monotonic()
        return [g.game_id for g in self.games.values()
                if not g.done and g.status == "playing" and now - g.changed_at > idle_s]

    async def settle(self, timeout: float) -> None:
        """Waits for the probes still running (each bounded by the command deadline)."""
        if self._background:
            await asyncio.wait(self._background, timeout=timeout)

    async def _games_in_a_row(self) -> None:
        while not self.stopping:
            game = await self._new_game()
            if game is None:
                await asyncio.sleep(0.5)
                continue
            await asyncio.gather(*(self._seat(game, seat) for seat in range(game.seats)))
            game.done = True
            if game.status == "over":
                self.ledger.finished += 1

    def _request_id(self, what: str) -> str | None:
        return f"{self.run_id}-{what}-{self.rng.randbytes(12).hex()}" if self.request_ids else None

    def _choice(self) -> tuple[str, int]:
        """A title and seat count at random; a title not created yet while there is one."""
        if not self.titles_unplayed:
            return self.rng.choice(self.choices)
        name = self.titles_unplayed.pop(self.rng.randrange(len(self.titles_unplayed)))
        return self.rng.choice([c for c in self.choices if c[0] == name])

    async def _new_game(self) -> Game | None:
        """Creates a game. A create whose answer was lost is resent under its request id when the gateway takes
        them; else it can only be tried again as a new game (the first may exist, unknown to its creator)."""
        try_: CreateTry | None = None
        for attempt in range(10):
            if self.stopping:
                return None
            if try_ is None or try_.request_id is None:
                name, seats = self._choice()
                title = f"chaos {self.run_id} #{self._next()}"
                seed = self.rng.randbytes(32).hex() if self.rng.random() < self.chosen_seed_rate else None
                try_ = self.ledger.creates[title] = CreateTry(title, name, seats, seed, self._request_id("create"))
            body: dict[str, Any] = {"game": try_.game, "title": try_.title, "seats": try_.seats}
            if try_.seed:
                body["seed"], body["unfair"] = try_.seed, True
            if try_.request_id:
                body["request_id"] = try_.request_id
            started = time.monotonic()
            r = await self.call("POST", "/games", json=body)
            try_.answer = _describe(r)
            if isinstance(r, Response) and r.status_code == 201:
                self.ledger.latency["create"].append(time.monotonic() - started)
                try_.game_id = r.json()["game_id"]
                try_.creator_token = r.json().get("creator_token") or None
                game = self.games[try_.game_id] = Game(try_.game_id, try_.game, try_.seats, try_.title)
                return game if await self._join_all(game) else None
            self._note_unanswered(r, f"POST /games {body}")
            await asyncio.sleep(max(_retry_after(r), min(2.0, 0.1 * 2 ** attempt)))
        return None

    async def _join_all(self, game: Game) -> bool:
        for seat in range(game.seats):
            try_: JoinTry | None = None
            for attempt in range(20):
                if self.stopping:
                    game.done = True
                    self.ledger.abandoned["stopped_before_start"] += 1
                    return False
                if try_ is None or try_.request_id is None:
                    name = f"{self.run_id}-{self._next()}"
                    try_ = JoinTry(game.game_id, seat, name, self._request_id("join"))
                    self.ledger.joins[(game.game_id, name)] = try_
                body: dict[str, Any] = {"name": try_.name, "seat": seat}
                if try_.request_id:
                    body["request_id"] = try_.request_id
                started = time.monotonic()
                r = await self.call("POST", f"/games/{game.game_id}/seats", json=body)
                try_.answer = _describe(r)
                if isinstance(r, Response) and r.status_code == 201:
                    self.ledger.latency["join"].append(time.monotonic() - started)
                    if r.json()["seat"] != seat:
                        self.ledger.wrong("201 wrong seat", f"join {body} of {game.game_id} -> {r.text}")
                    try_.token = r.json()["token"]
                    self.ledger.tokens[(game.game_id, seat)] = try_.token
                    break
                if isinstance(r, Response) and r.status_code == 409 and try_.request_id is None:
                    # The seat went to an earlier try of ours whose answer was lost: its token is lost with it
                    # (without a request id, a join cannot be resent), so this game can never be played.
                    game.done = True
                    self.ledger.abandoned["join_answer_lost"] += 1
                    return False
                self._note_unanswered(r, f"POST /games/{game.game_id}/seats {body}")
                if isinstance(r, Response) and r.status_code == 409:  # resent under its request id: never right
                    game.done = True
                    self.ledger.abandoned["join_refused"] += 1
                    return False
                await asyncio.sleep(max(_retry_after(r), min(2.0, 0.1 * 2 ** attempt)))
            else:
                game.done = True
                self.ledger.abandoned["join_never_answered"] += 1
                return False
        return True

    def _note_unanswered(self, r: Response | BaseException, what: str) -> None:
        """A 5xx, an answer that says "not yet, retry shortly" or a transport error is a fault's doing (the
        request is sent again); any other answer is wrong for this client, whose requests are all valid."""
        if isinstance(r, BaseException):
            return
        described = _describe(r)
        if r.status_code >= 500 or described.split(" ")[-1] in RETRY_CODES:
            self.ledger.retried_answers[described] += 1
        else:
            self.ledger.wrong(described, f"{what} -> {r.status_code} {r.text}")

    def _auth(self, game: Game, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.ledger.tokens[(game.game_id, seat)]}"}

    async def _view(self, game: Game, seat: int, min_version: int) -> dict | None:
        r = await self.call("GET", f"/games/{game.game_id}/seats/{seat}/view",
                            params={"min_version": min_version} if min_version else None,
                            headers=self._auth(game, seat))
        if isinstance(r, Response) and r.status_code == 200:
            view = r.json()
            if view["version"] > game.version:
                game.version, game.status, game.changed_at = view["version"], view["status"], time.monotonic()
            return view
        self._note_unanswered(r, f"GET view {game.game_id}/{seat}")
        await asyncio.sleep(_retry_after(r))
        return None

    async def _legal(self, game: Game, seat: int) -> dict | None:
        r = await self.call("GET", f"/games/{game.game_id}/seats/{seat}/legal", headers=self._auth(game, seat))
        if isinstance(r, Response) and r.status_code == 200:
            return r.json()
        self._note_unanswered(r, f"GET legal {game.game_id}/{seat}")
        await asyncio.sleep(_retry_after(r))
        return None

    async def _seat(self, game: Game, seat: int) -> None:
        """One seat's client: waits for its turn, sends a random legal command, until the game ends."""
        want = 0
        accepted_by = 0.0  # when the last accepted command was sent: it is done end to end once in the view
        while not self.stopping:
            view = await self._view(game, seat, want)
            if view is None:
                await asyncio.sleep(self.rng.uniform(0.1, 0.4))
                continue
            if accepted_by and view["version"] >= want:
                self.ledger.e2e.append((accepted_by, time.monotonic()))
                self.progress.set()
            accepted_by = 0.0
            if view["status"] == "over":
                game.status = "over"
                return
            if view["status"] != "playing" or seat not in view["flow"]["awaiting"]:
                want = view["version"] + 1
                continue
            legal = await self._legal(game, seat)
            if legal is None:
                await asyncio.sleep(self.rng.uniform(0.1, 0.4))
                continue
            if not legal["legal"]:
                want = legal["version"] + 1
                continue
            sent = await self.send(game, seat, self.rng.choice(legal["legal"]),
                                   expected_version=self._expected(legal["version"]))
            if sent.accepted:
                want = json.loads(sent.outcome[1])["version"]
                accepted_by = sent.answered_by
            else:
                want = legal["version"] + 1  # refused (or never answered): look again once something changed

    def _expected(self, version: int) -> int | None:
        """A quarter of the commands say the version they were decided on, when the gateway takes it (those of a
        phase where several seats choose at once are then often refused as ``stale``: the client looks again)."""
        return version if self.expected_versions and self.rng.random() < 0.25 else None

    def new_command_id(self, game: Game, seat: int) -> str:
        return f"{self.run_id}-{game.game_id}-{seat}-{self._next()}"

    async def send(self, game: Game, seat: int, body: dict[str, Any], command_id: str | None = None,
                   racer: bool = False, expected_version: int | None = None) -> Sent:
        """Posts the command until it gets an answer (a decision: 200, 409, 422), resending under the same id
        after a timeout, a 5xx or a lost connection; gives up after ``command_deadline`` seconds."""
        key = (game.game_id, seat, command_id or self.new_command_id(game, seat))
        sent = self.ledger.commands.get(key)
        if sent is None:
            sent = self.ledger.commands[key] = Sent(game.game_id, seat, key[2], body, racer=racer,
                                                    expected_version=expected_version)
        deadline = time.monotonic() + self.command_deadline
        path = f"/games/{game.game_id}/seats/{seat}/commands"
        payload = {"command_id": key[2], "command": sent.body}
        if sent.expected_version is not None:
            payload["expected_version"] = sent.expected_version
        for attempt in range(10_000):
            started = time.monotonic()
            sent.requests += 1
            self.ledger.requests += 1
            r = await self.call("POST", path, json=payload, headers=self._auth(game, seat))
            if isinstance(r, Response) and r.status_code in ANSWERED:
                self.ledger.latency["command"].append(time.monotonic() - started)
                first = not sent.answers
                sent.answers.append((r.status_code, _canonical(r)))
                if first:
                    sent.answered_by = started
                if first and not racer and self.rng.random() < self.probe_rate:
                    self._spawn(self._probe(game, seat, key[2]))
                return sent
            self._note_unanswered(r, f"POST {path} {key[2]}")
            if time.monotonic() > deadline:
                return sent
            await asyncio.sleep(max(_retry_after(r), min(2.0, 0.05 * 2 ** attempt) * self.rng.uniform(0.5, 1.0)))
        return sent

    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _probe(self, game: Game, seat: int, command_id: str) -> None:
        """The same command id sent again later: the answer must be the first one."""
        await asyncio.sleep(self.rng.uniform(0.0, 2.0))
        self.ledger.probes += 1
        await self.send(game, seat, {}, command_id)

    # --- sixteen writers on one seat --------------------------------------------------------------------

    async def _races(self) -> None:
        while not self.stopping:
            await asyncio.sleep(self.race_every * self.rng.uniform(0.5, 1.5))
            if self.stopping:
                return
            playing = [g for g in self.games.values() if g.status == "playing" and not g.done]
            if playing:
                await self.race(self.rng.choice(playing))

    async def race(self, game: Game) -> int | None:
        """Sixteen tasks send sixteen different commands (different ids; different bodies as far as the legal
        list allows) for one awaited seat at the same moment. Returns how many were accepted."""
        r = await self.call("GET", f"/games/{game.game_id}/view")
        if not isinstance(r, Response) or r.status_code != 200 or not r.json()["flow"]["awaiting"]:
            return None
        seat = self.rng.choice(r.json()["flow"]["awaiting"])
        legal = await self._legal(game, seat)
        if legal is None or not legal["legal"]:
            return None
        options = legal["legal"]
        bodies = self.rng.sample(options, min(RACERS, len(options)))
        bodies += [self.rng.choice(options) for _ in range(RACERS - len(bodies))]
        go = asyncio.Event()

        async def racer(body: dict) -> Sent:
            await go.wait()
            return await self.send(game, seat, body, racer=True, expected_version=self._expected(legal["version"]))

        tasks = [asyncio.create_task(racer(body)) for body in bodies]
        await asyncio.sleep(0)
        go.set()
        results = await asyncio.gather(*tasks)
        accepted = sum(s.accepted for s in results)
        self.ledger.races.append(accepted)
        for s in results:  # each id once more: the same answer
            self.ledger.probes += 1
            await self.send(game, seat, s.body, s.command_id, racer=True)
        return accepted


def _canonical(r: Response) -> str:
    try:
        return json.dumps(r.json(), sort_keys=True)
    except ValueError:
        return r.text
