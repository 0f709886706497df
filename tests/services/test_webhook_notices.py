"""Webhooks, piece by piece: the signature a receiver checks, the URLs Souk posts to, the notices a game's events
make (turns, clock low), and the outbox's exactly-once effect under redelivered events and racing workers. The
whole path over HTTP: tests/services/test_webhooks.py."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import msgspec
import pytest

from contracts.api import WebhookNotice
from contracts.envelope import EventEnvelope
from contracts.table import ClocksSet, PlayFor, SeatClock, Timeout
from domain import table as tbl
from services.engine.service import Engine
from services.runtime import metrics
from services.runtime.config import Settings
from services.store import keys
from services.store.events import RedisEventStore
from services.webhooks import outbox, signing, urls
from services.webhooks.notices import Followed, Thresholds, _clocks, follow
from services.webhooks.outbox import Delivery
from services.webhooks.registry import GAME, Registration, register, seat_field
from services.webhooks.worker import WebhookWorker
from tests.domain.clock_toy import toy_games  # noqa: F401 - the fixture
from tests.domain.test_clocks import Clocked
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th
from tests.services.webhook_receiver import Running

pytestmark = pytest.mark.anyio


# --- the signature ------------------------------------------------------------------------------------------

def test_a_signature_verifies_the_body_and_time_it_signs_and_nothing_else():
    body = b'{"kind":"turn"}'
    headers = signing.headers("s3cret", "g:6:turn:1", body, now=1_000_000.0)
    ts, sig = headers[signing.TIMESTAMP], headers[signing.SIGNATURE]
    assert headers[signing.IDEMPOTENCY_KEY] == "g:6:turn:1" and sig.startswith("v1=")
    assert signing.verify("s3cret", ts, body, sig, now=1_000_100.0)
    assert not signing.verify("s3cret", ts, body + b" ", sig, now=1_000_100.0)  # another body
    assert not signing.verify("other", ts, body, sig, now=1_000_100.0)  # another secret
    assert not signing.verify("s3cret", str(int(ts) + 1), body, sig, now=1_000_100.0)  # another time
    assert not signing.verify("s3cret", ts, body, sig, now=1_000_000.0 + 301)  # too old: replayed


# --- the URLs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "allow_http", "code"), [
    ("https://hooks.example.com/souk", False, None),
    ("https://hooks.example.com:8443/souk?app=1", False, None),
    ("http://hooks.example.com/souk", False, "bad_webhook"),
    ("http://hooks.example.com/souk", True, None),
    ("ftp://hooks.example.com/souk", True, "bad_webhook"),
    ("https://user:pw@hooks.example.com/", False, "bad_webhook"),
    ("https:///no-host", False, "bad_webhook"),
    ("https://hooks.example.com/#frag", False, "bad_webhook"),
    ("https://hooks.example.com:99999/", False, "bad_webhook"),
    ("https://hooks.example.com/" + "a" * 2048, False, "bad_webhook"),
])
def test_a_webhook_url_is_https_unless_the_operator_allows_http(url, allow_http, code):
    if code is None:
        urls.check_url(url, allow_http)
    else:
        with pytest.raises(urls.WebhookRefused) as refused:
            urls.check_url(url, allow_http)
        assert refused.value.code == code


@pytest.mark.parametrize(("address", "public"), [
    ("93.184.215.14", True), ("2606:4700::6810:85e5", True),
    ("127.0.0.1", False), ("::1", False), ("10.1.2.3", False), ("172.16.0.1", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("fe80::1", False), ("100.64.0.1", False), ("0.0.0.0", False),
    ("::ffff:127.0.0.1", False), ("::ffff:10.0.0.1", False), ("224.0.0.1", False), ("fc00::1", False),
])
def test_only_global_unicast_addresses_are_public(address, public):
    assert urls.is_public(address) is public


async def test_a_host_on_a_private_address_is_refused_unless_the_operator_allows_it():
    for url in ("https://127.0.0.1/hook", "https://localhost/hook", "https://[::1]/hook", "https://169.254.169.254/"):
        with pytest.raises(urls.WebhookRefused) as refused:
            await urls.check(url, allow_http=False, allow_private=False)
        assert refused.value.code == "webhook_not_public"
        await urls.check(url, allow_http=False, allow_private=True)
    with pytest.raises(urls.WebhookRefused) as refused:
        await urls.check("https://no-such-host.invalid/", allow_http=False, allow_private=True)
    assert refused.value.code == "bad_webhook"


async def test_the_address_is_checked_again_at_delivery_against_dns_rebinding(redis):
    """A URL registered while private addresses were allowed (or whose name resolved elsewhere then) is refused
    at the connection when its host resolves to a private address now: nothing reaches the receiver, and the
    delivery is tried again later with the reason."""
    with Running() as receiver:
        url = f"http://localhost:{receiver.port}/hook"
        await register(redis, "g1", GAME, Registration(url, "s"))
        notice = WebhookNotice("g1:5:turn:0", "turn", "g1", 5, 0, "tally", "t", 1.0)
        delivery = Delivery(outbox.delivery_id(notice.key, GAME), "g1", GAME, notice, made_at=time.time())
        await outbox.enqueue(redis, "g1", 0, 5, [(delivery, time.time())], [])
        worker = WebhookWorker(redis, RedisEventStore(redis), Settings(webhooks_allow_http=True))
        retried, delivered = (metrics.WEBHOOK_ATTEMPTS.labels(o)._value.get() for o in ("retried", "delivered"))
        try:
            assert await worker.deliver() == 1
        finally:
            await worker.stop()
        assert receiver.all() == []
        [raw] = await redis.hvals(keys.webhook_deliveries(0))
        kept = outbox.decode(raw)
        assert kept.attempts == 1 and "webhook_not_public" in kept.last_error
        assert await redis.zscore(keys.webhook_outbox(0), delivery.id) > time.time()  # tried again later
        from services.gateway.health import webhooks

        assert (await webhooks(redis))["overdue"] == 0  # leased into the future: not overdue
        await redis.zadd(keys.webhook_outbox(0), {delivery.id: time.time() - 120})  # as if no worker looked for 2 min
        assert {k: v for k, v in (await webhooks(redis)).items() if k != "oldest_overdue_s"} == {
            "deliveries": 1, "overdue": 1, "dead": 0}

        allowed = WebhookWorker(redis, RedisEventStore(redis),
                                Settings(webhooks_allow_http=True, webhooks_allow_private=True),
                                clock=lambda: time.time() + 3600)
        try:
            assert await allowed.deliver() == 1
        finally:
            await allowed.stop()
        assert [r.status for r in receiver.all()] == [204]
        assert metrics.WEBHOOK_ATTEMPTS.labels("retried")._value.get() == retried + 1  # souk_webhook_attempts_total
        assert metrics.WEBHOOK_ATTEMPTS.labels("delivered")._value.get() == delivered + 1


# --- the notices --------------------------------------------------------------------------------------------

def env(seq: int, event, at: float = 100.0) -> EventEnvelope:
    return EventEnvelope("g1", seq, "table.ClocksSet", msgspec.Raw(msgspec.json.encode(event)), f"c{seq}", None, at,
                         "")


def test_a_clock_low_notice_is_due_at_the_lesser_of_a_share_of_the_time_and_a_minute_before_the_deadline():
    followed = Followed()
    made, cancelled = [], []
    table = tbl.Table(game="tally", title="t", seats=3)
    at = 1000.0
    clocks = ClocksSet(at, (SeatClock(at + 100, 0.0), SeatClock(at + 1000, 500.0), SeatClock(None, 30.0)))
    _clocks(followed, table, "g1", env(7, clocks, at), clocks, Thresholds(0.2, 60.0), made, cancelled)
    assert [(d.notice.kind, d.notice.seat, d.notice.deadline, d.at) for d in made] == [
        ("clock_low", 0, at + 100, at + 80),  # 20% of 100 s: 20 s before
        ("clock_low", 1, at + 1000, at + 940),  # 20% of 1000 s is more than a minute: 60 s before
    ]
    assert [d.notice.key for d in made] == ["g1:7:clock_low:0", "g1:7:clock_low:1"] and cancelled == []

    # later: seat 0's deadline unchanged (another seat's move), seat 1 moved (another deadline), seat 2 awaited
    made.clear()
    later = ClocksSet(at + 50, (SeatClock(at + 100, 0.0), SeatClock(None, 600.0), SeatClock(at + 90, 30.0)))
    _clocks(followed, table, "g1", env(9, later, at + 50), later, Thresholds(0.2, 60.0), made, cancelled)
    assert cancelled == ["g1:7:clock_low:1"]
    assert [(d.notice.key, d.at) for d in made] == [("g1:9:clock_low:2", at + 90 - 8)]  # 20% of its 40 s

    made.clear()  # no clock at all (a game timer runs: the seats' clocks pause)
    paused = ClocksSet(at + 60, ())
    _clocks(followed, table, "g1", env(11, paused, at + 60), paused, Thresholds(0.2, 60.0), made, cancelled)
    assert made == [] and cancelled == ["g1:7:clock_low:1", "g1:7:clock_low:0", "g1:9:clock_low:2"]


async def test_it_becomes_a_seats_turn_when_it_is_awaited_after_another_seats_command(redis):
    engine = Engine(redis, RedisEventStore(redis))
    turn = await started(engine)
    followed = Followed()
    made, _ = follow(followed, "g1", await RedisEventStore(redis).read("g1"), Thresholds())
    assert [(d.notice.kind, d.notice.seat, d.notice.version) for d in made] == [("turn", turn, 5)]
    await engine.handle([cmd("g1", Add(3), seat=turn, token=th(turn), cid="a")])
    made, _ = follow(followed, "g1", await RedisEventStore(redis).read("g1", after=5), Thresholds())
    assert [(d.notice.kind, d.notice.seat, d.notice.version, d.notice.game) for d in made] == [
        ("turn", 1 - turn, 6, "tally")]


# --- the outbox ---------------------------------------------------------------------------------------------

async def test_redelivered_events_and_workers_racing_on_a_game_add_each_delivery_once(redis):
    engine = Engine(redis, RedisEventStore(redis))
    await register(redis, "g1", GAME, Registration("https://hooks.example.com/g", "s"))
    await register(redis, "g1", seat_field(th(0)), Registration("https://hooks.example.com/0", "s0"))
    turn = await started(engine)
    for i in range(4):  # 3 + 3 + 3 + 3: over
        [reply] = await engine.handle([cmd("g1", Add(3), seat=turn, token=th(turn), cid=f"a{i}")])
        assert reply.status == "accepted"
        turn = 1 - turn
    entries = [fields for _, fields in await redis.xrange(keys.events(0))]
    store = RedisEventStore(redis)
    worker = WebhookWorker(redis, store, Settings())
    await worker.handle(entries[:3])  # a batch that ends inside the last join's command: completed from the store
    await worker.handle(entries[3:])
    first = await redis.hgetall(keys.webhook_deliveries(0))
    kinds = sorted(outbox.decode(v).notice.kind for v in first.values())
    assert kinds.count("game_ended") == 2 and "turn" in kinds  # the game's once (seat None), seat 0's once
    assert int(await redis.get(keys.webhook_position("g1"))) == len(entries)

    await worker.handle(entries)  # redelivered
    await WebhookWorker(redis, store, Settings()).handle(entries[2:])  # another worker, no cache, the same events
    assert await redis.hgetall(keys.webhook_deliveries(0)) == first
    assert await redis.zcard(keys.webhook_outbox(0)) == len(first)

    for raw in first.values():  # every one delivered: a redelivered event must not make it again
        await outbox.done(redis, outbox.decode(raw))
    await worker.handle(entries)
    await WebhookWorker(redis, store, Settings()).handle(entries[-1:])
    assert not await redis.exists(keys.webhook_deliveries(0), keys.webhook_outbox(0))


async def test_a_game_without_webhooks_costs_no_fold_and_no_outbox(redis):
    engine = Engine(redis, RedisEventStore(redis))
    await started(engine)
    worker = WebhookWorker(redis, RedisEventStore(redis), Settings())
    await worker.handle([fields for _, fields in await redis.xrange(keys.events(0))])
    assert worker.cache.get("g1") is None
    assert not await redis.exists(keys.webhook_outbox(0), keys.webhook_deliveries(0), keys.webhook_position("g1"))


async def test_a_receiver_that_hangs_does_not_hold_back_the_others_deliveries(redis):
    """One receiver answers only after the 2 s timeout; the notices for another, due meanwhile, arrive at once."""
    with Running(mode="hang", hang_s=3.0) as slow, Running() as quick:
        await register(redis, "g1", GAME, Registration(slow.url("/slow"), "s"))
        await register(redis, "g2", GAME, Registration(quick.url("/quick"), "q"))
        worker = WebhookWorker(redis, RedisEventStore(redis),
                               Settings(webhooks_allow_http=True, webhooks_allow_private=True, webhooks_timeout_s=2.0,
                                        webhooks_poll_s=0.02))

        async def notice(game_id: str, version: int) -> None:
            n = WebhookNotice(f"{game_id}:{version}:turn:0", "turn", game_id, version, 0, "tally", "t", 1.0)
            d = Delivery(outbox.delivery_id(n.key, GAME), game_id, GAME, n, made_at=time.time())
            await outbox.enqueue(redis, game_id, version - 1, version, [(d, time.time())], [])

        await notice("g1", 1)
        worker.start()
        try:
            await asyncio.sleep(0.2)  # the slow one is in flight
            sent = time.monotonic()
            await notice("g2", 1)
            while not quick.accepted() and time.monotonic() - sent < 5:
                await asyncio.sleep(0.01)
            assert quick.accepted() and time.monotonic() - sent < 1.0
        finally:
            await worker.stop()


def test_clock_low_follows_the_tables_clocks_and_is_cancelled_by_a_move_and_by_the_end(toy_games):
    """The toy game of the clock tests, 10 s a decision and a 60 s reserve: the start sets seat 0's deadline (170),
    so its clock_low is due 14 s before (20% of 70 s); a bot's move for it after its timeout cancels it, makes
    seat 1's turn and its clock_low; the end cancels what is left."""
    game = Clocked(clock={"per_decision": 10.0, "reserve": 60.0, "increment": 5.0}, start=100.0, moves=3)
    game.platform(Timeout(0, 170.0), 170.5)
    game.platform(PlayFor(0, "random", {"type": "toy.Move"}), 171.0)
    game.move(1, 180.0)
    envelopes, seq = [], 0
    for n, (seat, _, _, now, events) in enumerate(game.log):
        for event in events:
            seq += 1
            envelopes.append(EventEnvelope("g1", seq, "", msgspec.Raw(msgspec.json.encode(event)), f"c{n}", seat,
                                           now, ""))
    followed = Followed()
    made, cancelled = follow(followed, "g1", envelopes, Thresholds(0.2, 60.0))
    shown = [(d.notice.kind, d.notice.seat, d.notice.deadline, d.at) for d in made]
    assert shown == [
        ("clock_low", 0, 170.0, 156.0), ("turn", 0, None, 100.0),  # the start
        ("clock_low", 1, 241.0, 227.0), ("turn", 1, None, 171.0),  # the bot's move for seat 0
        ("clock_low", 0, 195.0, 192.0), ("turn", 0, None, 180.0),  # seat 1's move: 15 s left to seat 0
    ]
    assert cancelled == [made[0].notice.key, made[2].notice.key]
    finished = game.move(0, 190.0)
    assert any(type(e).__name__ == "GameEnded" for e in finished)
    end = [EventEnvelope("g1", seq + i + 1, "", msgspec.Raw(msgspec.json.encode(e)), "end", 0, 190.0, "")
           for i, e in enumerate(finished)]
    made, cancelled = follow(followed, "g1", end, Thresholds(0.2, 60.0))
    assert cancelled == [f"g1:{envelopes[-1].seq}:clock_low:0"]  # seat 0's, set by seat 1's move
    assert [(d.notice.kind, d.notice.seat) for d in made] == [("game_ended", None), ("game_ended", 0),
                                                              ("game_ended", 1)]


def envelopes_of(game: Clocked) -> list[EventEnvelope]:
    out = []
    for n, (seat, _, _, now, events) in enumerate(game.log):
        for event in events:
            out.append(EventEnvelope("g1", len(out) + 1, "", msgspec.Raw(msgspec.json.encode(event)), f"c{n}", seat,
                                     now, ""))
    return out


def test_a_seat_a_bot_plays_for_hears_no_turn_until_it_comes_back(toy_games):
    """Policy "absent": after its timeout a bot plays every decision of seat 0; its turns are the bot's, not news
    for its player; once it sends a command again, its next turn is told again."""
    game = Clocked(clock={"per_decision": 10.0, "on_timeout": "absent"}, start=100.0, moves=8)
    game.platform(Timeout(0, 110.0), 111.0)
    game.platform(PlayFor(0, "random", {"type": "toy.Move"}), 112.0)
    game.move(1, 120.0)  # seat 0 awaited again, still absent: a bot's decision
    game.platform(PlayFor(0, "random", {"type": "toy.Move"}), 121.0)
    game.move(0, 125.0)  # back (SeatReturned), not its turn
    game.move(1, 130.0)  # seat 0's turn: its own again
    made, _ = follow(Followed(), "g1", envelopes_of(game), Thresholds())
    turns = [(d.notice.seat, d.at) for d in made if d.notice.kind == "turn"]
    assert turns == [(0, 100.0), (1, 112.0), (1, 121.0), (0, 130.0)]


def self_signed(tmp_path, name: str) -> tuple[str, str]:
    """A certificate for ``name`` (openssl), and its key."""
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return str(cert), str(key)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificates with openssl")
async def test_https_through_the_checked_address_still_checks_the_certificate_against_the_host_name(tmp_path):
    """The guard connects to the address it checked, not to the name: TLS must still send the name (SNI) and verify
    the certificate against it. A certificate for localhost is accepted at https://localhost; one for another name
    is refused there."""
    for name, accepted in (("localhost", True), ("elsewhere.example", False)):
        cert, key = self_signed(tmp_path, name)
        with Running() as receiver:
            server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            server_context.load_cert_chain(cert, key)
            receiver.tls(server_context)
            client = urls.guarded_client(True, 5.0, verify=ssl.create_default_context(cafile=cert))
            try:
                if accepted:
                    r = await client.post(f"https://localhost:{receiver.port}/hook", content=b"{}")
                    assert r.status_code == 204
                else:
                    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED|certificate"):
                        await client.post(f"https://localhost:{receiver.port}/hook", content=b"{}")
            finally:
                await client.aclose()
        assert len(receiver.accepted()) == int(accepted)
        refusing = urls.guarded_client(False, 5.0, verify=ssl.create_default_context(cafile=cert))
        try:
            with pytest.raises(httpx.ConnectError, match="webhook_not_public"):
                await refusing.post("https://localhost:9/hook", content=b"{}")
        finally:
            await refusing.aclose()


def test_the_readmes_few_lines_of_python_verify_a_signature():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("### Webhooks"):]
    start = section.index("```python\n") + len("```python\n")
    code = section[start:section.index("\n```", start)]
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the README's own snippet
    body = b'{"key":"g:6:turn:1"}'
    headers = signing.headers("the-secret", "g:6:turn:1", body, time.time())
    assert scope["verified"]("the-secret", headers, body)
    assert not scope["verified"]("the-secret", headers, body.replace(b"1", b"0"))
    assert not scope["verified"]("the-secret", signing.headers("the-secret", "k", body, time.time() - 600), body)


async def test_two_workers_on_one_outbox_post_each_delivery_once(redis):
    """Each delivery is claimed by one worker at a time (its lease): two delivery loops, 60 notices, 60 POSTs."""
    with Running() as receiver:
        await register(redis, "g1", GAME, Registration(receiver.url("/hook"), "s"))
        made = []
        for version in range(1, 61):
            n = WebhookNotice(f"g1:{version}:turn:0", "turn", "g1", version, 0, "tally", "t", 1.0)
            made.append((Delivery(outbox.delivery_id(n.key, GAME), "g1", GAME, n, made_at=time.time()), time.time()))
        await outbox.enqueue(redis, "g1", 0, 60, made, [])
        # a POST the busy receiver fails (a ReadError at load 8) is retried soon, and waited for: each key is still
        # posted once
        fast = Settings(webhooks_allow_http=True, webhooks_allow_private=True, webhooks_poll_s=0.01,
                        webhooks_retry_s=0.1, webhooks_retry_max_s=0.5)
        workers = [WebhookWorker(redis, RedisEventStore(redis), fast) for _ in range(2)]
        for worker in workers:
            worker.start()
        try:
            deadline = time.monotonic() + 60
            while await redis.zcard(keys.webhook_outbox(0)) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        finally:
            for worker in workers:
                await worker.stop()
        keys_posted = [r.notice["key"] for r in receiver.all()]
        assert sorted(keys_posted) == sorted(d.notice.key for d, _ in made)  # each once, none twice


async def test_a_delivery_whose_worker_died_during_its_attempt_is_tried_again_when_its_lease_ends(redis):
    with Running() as receiver:
        await register(redis, "g1", GAME, Registration(receiver.url("/hook"), "s"))
        n = WebhookNotice("g1:7:turn:1", "turn", "g1", 7, 1, "tally", "t", 1.0)
        d = Delivery(outbox.delivery_id(n.key, GAME), "g1", GAME, n, made_at=time.time())
        await outbox.enqueue(redis, "g1", 0, 7, [(d, time.time())], [])
        # claimed, then killed -9
        assert await outbox.claim(redis, keys.partition(d.game_id), d.id, time.time(), lease_s=25.0) is not None
        settings = Settings(webhooks_allow_http=True, webhooks_allow_private=True)
        now = time.time()
        assert await WebhookWorker(redis, RedisEventStore(redis), settings, clock=lambda: now + 20).deliver() == 0
        later = WebhookWorker(redis, RedisEventStore(redis), settings, clock=lambda: now + 30)
        try:
            assert await later.deliver() == 1
        finally:
            await later.stop()
        assert [r.notice["key"] for r in receiver.accepted()] == ["g1:7:turn:1"]
        assert not await redis.exists(keys.webhook_outbox(0), keys.webhook_deliveries(0))
