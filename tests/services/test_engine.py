"""The engine: generic checks, answers, idempotency, conflicts, against a real Redis."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from services.store.codec import encoder
from services.store import keys
from services.engine.service import Contended, Engine
from services.store.events import CONFLICT, AppendResult, RedisEventStore
from tests.services.tally import Add

pytestmark = pytest.mark.anyio


def th(seat: int) -> str:
    return hashlib.sha256(f"t{seat}".encode()).hexdigest()


def cmd(game_id: str, body, seat=None, token=None, cid=None) -> CommandEnvelope:
    cid = cid or f"c-{id(body)}-{seat}"
    return CommandEnvelope(cid, game_id, msgspec.Raw(encoder.encode(body)), seat=seat, token_hash=token)


@pytest.fixture
def engine(redis):
    return Engine(redis, RedisEventStore(redis))


async def started(engine: Engine, game_id: str = "g1", seats: int = 2) -> int:
    """Creates and fills a tally game; returns the seat whose turn it is."""
    replies = await engine.handle(
        [cmd(game_id, CreateGame("tally", "t", seats, {}, "00ff" * 16, unfair=True), cid="create")]
        + [cmd(game_id, JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(seats)]
    )
    assert [r.status for r in replies] == ["accepted"] * (seats + 1), replies
    return (await engine.load(game_id)).table.state.turn


async def test_a_game_is_created_joined_and_started_through_commands(engine):
    turn = await started(engine)
    slot = await engine.load("g1")
    assert slot.table.status == "playing" and slot.table.version == 5  # created, 2 joined, started, secrets
    assert turn in (0, 1)


async def test_an_accepted_command_is_answered_with_the_new_version(engine):
    turn = await started(engine)
    [reply] = await engine.handle([cmd("g1", Add(2), seat=turn, token=th(turn))])
    assert reply.status == "accepted" and reply.version == 6 and reply.events == 1 and reply.seat == turn


@pytest.mark.parametrize(
    ("who", "token", "body", "code"),
    [
        ("other", "own", Add(1), "not_your_turn"),
        ("turn", "wrong", Add(1), "bad_token"),
        ("turn", "own", Add(7), "bad_amount"),
        ("turn", "own", {"type": "tally.Jump"}, "bad_command"),
        ("turn", "own", {"type": "tally.Add", "amount": 1, "extra": 1}, "bad_command"),
    ],
)
async def test_a_refused_command_gets_its_code_and_appends_nothing(engine, who, token, body, code):
    turn = await started(engine)
    seat = turn if who == "turn" else 1 - turn
    token_hash = th(seat) if token == "own" else th(9)
    [reply] = await engine.handle([cmd("g1", body, seat=seat, token=token_hash)])
    assert reply.status == "rejected" and reply.code == code and reply.message
    assert await engine.store.version("g1") == 5


async def test_commands_to_a_missing_game_are_refused(engine):
    [reply] = await engine.handle([cmd("nope", Add(1), seat=0, token=th(0))])
    assert reply.code == "game_not_found"


async def test_a_resent_command_id_gets_the_first_answer_and_changes_nothing(engine):
    turn = await started(engine)
    first = cmd("g1", Add(3), seat=turn, token=th(turn), cid="same")
    [a] = await engine.handle([first])
    engine.cache.clear()
    [b] = await engine.handle([first])
    assert a == b and await engine.store.version("g1") == 6


async def test_a_resent_refused_command_keeps_its_first_refusal(engine):
    turn = await started(engine)
    [a] = await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="x")])
    [b] = await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="x")])
    assert a == b and a.code == "not_your_turn"


async def test_a_stale_engine_reloads_and_decides_again(redis):
    store = RedisEventStore(redis)
    one, two = Engine(redis, store), Engine(redis, store)
    turn = await started(one)
    await two.load("g1")  # two caches the game at version 5
    [a] = await one.handle([cmd("g1", Add(1), seat=turn, token=th(turn))])
    # two's cache is stale: its decision conflicts, it reloads, and the rules now see the other seat's turn
    [b] = await two.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn))])
    assert a.status == b.status == "accepted" and b.version == 7
    events = await store.read("g1")
    assert [e.seq for e in events] == list(range(1, 8))
    assert all(later.prev_hash == earlier.hash for earlier, later in zip(events, events[1:]))


async def test_a_conflicting_append_is_counted_in_the_engine_metrics(redis):
    """``souk_engine_conflicts_total``: each command decided again after its append found the game moved on (the
    cost of a stale cache, which several engines sharing a game's commands pay)."""
    from prometheus_client import REGISTRY

    def conflicts() -> float:
        return REGISTRY.get_sample_value("souk_engine_conflicts_total") or 0.0

    store = RedisEventStore(redis)
    one, two = Engine(redis, store), Engine(redis, store)
    turn = await started(one)
    await two.load("g1")
    before = conflicts()
    await one.handle([cmd("g1", Add(1), seat=turn, token=th(turn))])
    assert conflicts() == before  # one's cache was current
    await two.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn))])
    assert conflicts() == before + 1


async def test_an_engine_taking_a_partition_forgets_its_cached_games_there_and_decides_without_a_conflict(redis):
    """A partition handed back to an engine (``services.store.leases``): its games were moved on by another owner
    meanwhile; loaded fresh, not decided on the old cache (an append conflict, a reload, a decision made again)."""
    from prometheus_client import REGISTRY

    store = RedisEventStore(redis)
    one, two = Engine(redis, store), Engine(redis, store)
    turn = await started(one)
    await two.load("g1")
    await one.handle([cmd("g1", Add(1), seat=turn, token=th(turn))])  # the other owner moves the game on
    two.forget(keys.partition("g1"))
    before = REGISTRY.get_sample_value("souk_engine_conflicts_total") or 0.0
    [reply] = await two.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn))])
    assert reply.status == "accepted" and reply.version == 7
    assert (REGISTRY.get_sample_value("souk_engine_conflicts_total") or 0.0) == before


async def test_a_batch_plays_several_commands_of_one_game_in_order(engine):
    turn = await started(engine)
    seats = [turn, 1 - turn, turn]
    replies = await engine.handle([cmd("g1", Add(1), seat=s, token=th(s), cid=f"b{i}") for i, s in enumerate(seats)])
    assert [r.version for r in replies] == [6, 7, 8]


async def test_the_game_ends_with_the_seed_revealed(engine):
    turn = await started(engine)
    seat, version = turn, 5
    while True:
        [reply] = await engine.handle([cmd("g1", Add(3), seat=seat, token=th(seat), cid=f"e{version}")])
        assert reply.status == "accepted"
        version = reply.version
        if (await engine.load("g1")).table.status == "over":
            break
        seat = 1 - seat
    last = (await engine.store.read("g1"))[-1]
    ended = msgspec.json.decode(last.payload)
    assert ended["type"] == "table.GameEnded" and ended["seed"] == "00ff" * 16
    created = msgspec.json.decode((await engine.store.read("g1"))[0].payload)
    assert created["seed_hash"] == hashlib.sha256(bytes.fromhex("00ff" * 16)).hexdigest()
    [late] = await engine.handle([cmd("g1", Add(1), seat=seat, token=th(seat), cid="late")])
    assert late.code == "game_over"


async def test_a_command_refused_before_its_game_existed_is_decided_again_later(engine):
    early = cmd("g1", JoinSeat("a", th(0), 0), seat=0, cid="early")
    [first] = await engine.handle([early])
    assert first.code == "game_not_found"
    await engine.handle([cmd("g1", CreateGame("tally", "t", 2, {}), cid="create")])
    [again] = await engine.handle([early])
    assert again.status == "accepted"


# --- issue #8: chosen seeds, expected versions, poison commands, final answers ---------------------------------

@pytest.mark.parametrize("seed", ["00ff", "5eed", "00" * 31, "zz" * 32, "00" * 33])
async def test_a_chosen_seed_must_be_as_long_as_the_servers_own(engine, seed):
    [reply] = await engine.handle([cmd("g1", CreateGame("tally", "t", 2, {}, seed, unfair=True), cid="create")])
    assert reply.status == "rejected" and reply.code == "bad_seed"
    assert await engine.store.version("g1") == 0


async def test_a_game_whose_seed_was_chosen_says_so_to_everyone(engine):
    await started(engine)  # seed chosen, unfair
    assert (await engine.load("g1")).table.unfair is True
    created = msgspec.json.decode((await engine.store.read("g1"))[0].payload)
    assert created["unfair"] is True and "seed_chosen" not in created
    await engine.handle([cmd("g2", CreateGame("tally", "t", 2, {}), cid="create")])
    slot = await engine.load("g2")
    assert slot.table.unfair is False and len(slot.seed) == 32 and slot.seed != (await engine.load("g1")).seed


async def test_a_chosen_seed_without_unfair_is_refused_saying_what_to_add_and_nothing_is_kept(engine, redis):
    [reply] = await engine.handle([cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16), cid="create")])
    assert reply.status == "rejected" and reply.code == "seed_needs_unfair"
    assert '"unfair": true' in reply.message and "unfair=True" in reply.message
    assert await engine.store.version("g1") == 0 and await redis.get(keys.seed("g1")) is None
    # the same game, asked again with the flag, is created
    [again] = await engine.handle([cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="c2")])
    assert again.status == "accepted" and await redis.get(keys.seed("g1")) == bytes.fromhex("00ff" * 16)


async def test_a_command_decided_on_an_older_version_is_refused_as_stale_and_stays_refused(engine):
    turn = await started(engine)
    seen = (await engine.load("g1")).table.version
    # a double click: two different commands from one view; the second is refused, not applied after the first
    first = msgspec.structs.replace(cmd("g1", Add(1), seat=turn, token=th(turn), cid="click1"), expected_version=seen)
    [a] = await engine.handle([first])
    [b] = await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="click2")])
    late = msgspec.structs.replace(cmd("g1", Add(2), seat=turn, token=th(turn), cid="click3"), expected_version=seen)
    [c] = await engine.handle([late])
    assert a.status == b.status == "accepted" and c.status == "rejected" and c.code == "stale"
    assert await engine.store.version("g1") == seen + 2
    engine.cache.clear()
    [again] = await engine.handle([late])
    assert again == c


def nested(depth: int) -> bytes:
    """A command body nested ``depth`` levels deep where its type lets anything in (a game's options)."""
    return (b'{"type":"table.CreateGame","game":"tally","title":"t","seats":2,"options":{"x":'
            + b"[" * depth + b"]" * depth + b"}}")


@pytest.mark.parametrize("game_id", ["g1", "g2"])
async def test_a_poison_command_is_refused_and_spares_the_rest_of_its_batch(engine, game_id):
    turn = await started(engine)
    deep = CommandEnvelope("deep", game_id, msgspec.Raw(nested(5000)))
    good = cmd("g1", Add(1), seat=turn, token=th(turn), cid="good")
    replies = await engine.handle([deep, good])
    assert [r.status for r in replies] == ["rejected", "accepted"]
    assert replies[0].code == "bad_command"
    engine.cache.clear()
    assert (await engine.handle([deep]))[0] == replies[0]  # a resend gets the same answer


async def test_a_command_whose_rules_raise_is_refused_not_retried_for_ever(engine, tally_game, monkeypatch):
    turn = await started(engine)

    def broken(state, seat, command, chance):
        raise ZeroDivisionError("a bug in the rules")

    monkeypatch.setattr(tally_game, "decide", broken)
    [reply] = await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid="bug")])
    assert reply.status == "rejected" and reply.code == "command_failed"
    assert await engine.store.version("g1") == 5


async def test_an_unreadable_envelope_is_parked_for_an_operator_and_acknowledged(redis, redis_url):
    from services.runtime.config import Settings
    from services.cli.workers import Workers
    from services.store.streams import IdentifiedEntries

    workers = Workers(Settings(redis_url=redis_url))
    try:
        await workers.on_commands(IdentifiedEntries([(b"1-0", {b"c": b"[" * 3000 + b"]" * 3000}),
                                                     (b"2-0", {b"x": b"no c field"})], keys.commands(0)))
        parked = await redis.xrange(keys.PARKED)
        assert [f[b"reason"] for _, f in parked] == [b"envelope_unreadable"] * 2
    finally:
        await workers.stop()


async def test_commands_that_keep_conflicting_get_no_made_up_answer(engine, redis, monkeypatch):
    """An answer is final: a 'conflict' told while another copy of the command may be accepted later is not an
    answer. The batch stays unacknowledged and comes again instead."""
    turn = await started(engine)
    real_append = engine.store.append

    async def always_moved(appends):
        return [AppendResult(CONFLICT, version=99) for _ in appends]

    monkeypatch.setattr(engine.store, "append", always_moved)
    pubsub = redis.pubsub()
    await pubsub.subscribe("answers")
    await pubsub.get_message(timeout=1)
    env = msgspec.structs.replace(cmd("g1", Add(1), seat=turn, token=th(turn), cid="busy"), reply_to="answers")
    with pytest.raises(Contended):
        await engine.handle([env])
    assert await pubsub.get_message(timeout=0.2) is None  # nothing told to the sender
    await pubsub.aclose()
    monkeypatch.setattr(engine.store, "append", real_append)
    [reply] = await engine.handle([env])  # when the batch comes again, it is decided
    assert reply.status == "accepted"


async def test_a_seats_command_reusing_a_joins_id_after_the_end_is_refused_not_answered_as_the_join(engine):
    """A join is sent for no seat (the gateway's JoinSeat): a seat's later command with the same command id is
    another command. After the end, when resent commands are answered from the stream, it got the join's answer
    (seat 0), which the gateway, waiting for seat 1's, never matched: 504 engine_timeout (Schemathesis reused a
    command id read in the history)."""
    await engine.handle([cmd("g2", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create")])
    joins = await engine.handle([cmd("g2", JoinSeat(f"p{s}", th(s), s), cid=f"join{s}") for s in range(2)])
    assert [r.seat for r in joins] == [0, 1]
    seat = (await engine.load("g2")).table.state.turn
    for n in range(100):
        [reply] = await engine.handle([cmd("g2", Add(3), seat=seat, token=th(seat), cid=f"e{n}")])
        assert reply.status == "accepted"
        if (await engine.load("g2")).table.status == "over":
            break
        seat = 1 - seat
    [late] = await engine.handle([cmd("g2", Add(1), seat=1, token=th(1), cid="join0")])
    assert (late.status, late.code, late.seat) == ("rejected", "game_over", 1)
    [resent] = await engine.handle([cmd("g2", JoinSeat("p0", th(0), 0), cid="join0")])  # the join itself, resent
    assert (resent.status, resent.seat, resent.version) == ("accepted", 0, joins[0].version)


async def test_seats_answering_one_simultaneous_step_on_the_same_version_are_not_stale_to_each_other(engine):
    """Samarkand's sellers choose their cards at once, each on the view where the step began (its version as
    expected_version): one seat's choice does not make another's stale (1.5 stale refusals per accepted command
    in Istanbul 5 seats before, souk bench http --at-once). A seat's second command on that version, or a command
    after the step moved on, still is (test above); so is everything after a reload (the since is rebuilt from the
    stream: the same answers)."""
    from domain import table as tbl

    await engine.handle([cmd("s1", CreateGame("samarkand", "t", 3, {}, "00ff" * 16, unfair=True), cid="create")]
                        + [cmd("s1", JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(3)])
    table = (await engine.load("s1")).table
    awaited = tbl.flow(table).awaiting
    assert len(awaited) >= 2, awaited
    step = table.version

    def choose(seat: int, cid: str, version: int = step):
        legal = tbl.game_of(table).legal_commands(table.state, seat)
        return msgspec.structs.replace(cmd("s1", legal[0], seat=seat, token=th(seat), cid=cid), expected_version=version)

    [a] = await engine.handle([choose(awaited[0], "a")])
    engine.cache.clear()  # a reload in between: the same answer
    [b] = await engine.handle([choose(awaited[1], "b")])
    assert (a.status, b.status) == ("accepted", "accepted"), (a, b)
    [again] = await engine.handle([choose(awaited[0], "a2")])  # the first seat again, on the old version
    assert again.code in ("stale", "not_your_turn"), again


async def test_a_new_game_plays_its_titles_newest_rules_and_an_old_one_keeps_its_own(engine):
    """A rules fix must not change what an old game's recorded commands give when re-run (``souk verify``): the
    engine writes the newest revision into a new game's CreateGame before it decides and stores it; a CreateGame
    stored without one (a game created before revisions, re-run from its record) plays revision 1."""
    from domain import table as tbl
    from domain.karawane import rules as karawane

    created = CreateGame("karawane", "k", 2, {}, "00ff" * 16, unfair=True)
    [reply] = await engine.handle([cmd("new", created, cid="create-new")])
    assert reply.status == "accepted"
    slot = await engine.load("new")
    assert slot.table.options.rules == karawane.RULES
    envelopes, commands = await engine.store.read_with_commands("new")
    assert msgspec.json.decode(envelopes[0].payload)["options"] == {"rules": karawane.RULES}
    assert {"rules": karawane.RULES} in commands[1]  # the stored CreateGame names it: a re-run reads it

    # a game created before revisions: its stored CreateGame names none, its GameCreated options are {}
    old = tbl.decide(tbl.EMPTY, None, None, created, tbl.Chance(bytes.fromhex("00ff" * 16), 0))
    assert msgspec.to_builtins(old[0])["options"] == {}
    assert tbl.fold(old).options.rules == 1
    assert tbl.newest_rules(CreateGame("karawane", "k", 2, {"rules": 1})).options == {"rules": 1}  # kept as named
    assert tbl.newest_rules(CreateGame("yspahan", "y", 2, {})).options == {}  # a title without revisions


@pytest.mark.parametrize("snapshot_every", [0, 3])
async def test_a_command_resent_after_its_outcome_left_the_window_gets_its_first_answer_and_is_not_applied_again(
        redis, snapshot_every):
    """(issue #18, item 13) Only the latest accepted outcomes are kept (here 2): an older command's resend is
    answered from the game stream, by this engine and by one that loads the game cold (from its snapshot)."""
    store = RedisEventStore(redis, outcome_window=2)
    engine = Engine(redis, store, snapshot_every=snapshot_every)
    await started(engine)
    first: dict[str, object] = {}
    sent = []
    for n in range(8):
        turn = (await engine.load("g1")).table.state.turn
        env = cmd("g1", Add(1), seat=turn, token=th(turn), cid=f"add-{n}")
        [first[env.command_id]] = await engine.handle([env])
        sent.append(env)
    assert await redis.hlen(keys.outcomes("g1")) <= 2 + 3  # the window, and the create and joins before it
    assert await store.outcome("g1", f"{sent[0].seat}:add-0") is None
    version = await store.version("g1")
    for fresh in (False, True):
        if fresh:
            engine = Engine(redis, store, snapshot_every=snapshot_every)  # a cold load
        for env in sent:
            [again] = await engine.handle([env])
            assert again == first[env.command_id], (fresh, env.command_id)
        assert await store.version("g1") == version
        assert (await engine.load("g1")).table.state.total == 8
    # a new command id is still decided
    turn = (await engine.load("g1")).table.state.turn
    [new] = await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid="add-new")])
    assert new.status == "accepted" and await store.version("g1") == version + 1


async def seats_to_the_end(engine: Engine, game_id: str) -> list[int]:
    """The seats of a tally game's moves (Add(3) each, one a batch) from its start to its end."""
    seat, seats = await started(engine, game_id), []
    while (await engine.load(game_id)).table.status != "over":
        [reply] = await engine.handle([cmd(game_id, Add(3), seat=seat, token=th(seat), cid=f"m{len(seats)}")])
        assert reply.status == "accepted"
        seats.append(seat)
        seat = 1 - seat
    return seats


async def the_last_batch(engine: Engine, *last: str) -> tuple[list[CommandEnvelope], list]:
    """g1 played as g0 was up to its last two moves, then one batch: ``last``'s commands, each "x" (the move before
    the last), "end" (the last, which ends the game), "late" (a command of x's seat after the end) or "x" again."""
    seats = await seats_to_the_end(engine, "g0")
    await started(engine, "g1")
    for n, seat in enumerate(seats[:-2]):
        [reply] = await engine.handle([cmd("g1", Add(3), seat=seat, token=th(seat), cid=f"m{n}")])
        assert reply.status == "accepted"
    made = {"x": (Add(3), seats[-2]), "end": (Add(3), seats[-1]), "late": (Add(1), seats[-2])}
    envs = [cmd("g1", made[name][0], seat=made[name][1], token=th(made[name][1]), cid=name) for name in last]
    return envs, await engine.handle(envs)


async def test_a_command_accepted_in_the_batch_that_ended_the_game_gets_its_answer_again_when_resent(engine):
    """A late command in the batch that ended the game read the finished game's stream before that batch was
    appended, and the engine kept that read as the finished game's commands: a resend of a command accepted in
    the batch was then refused game_over, and that refusal recorded, an answer taken back (CI's souk chaos)."""
    envs, replies = await the_last_batch(engine, "x", "end", "late")
    assert [(r.status, r.code) for r in replies] == [("accepted", ""), ("accepted", ""), ("rejected", "game_over")]
    assert (await engine.load("g1")).table.status == "over"
    [again] = await engine.handle([envs[0]])
    assert again == replies[0]
    fresh = Engine(engine.redis, engine.store)  # and from the stream alone
    assert await fresh.handle([envs[0]]) == [replies[0]]


async def test_a_command_resent_in_the_batch_that_accepted_it_and_ended_the_game_gets_its_first_answer(engine):
    """The resend was decided after the end, on the finished game, and refused game_over: the game's end had
    dropped the accepted outcomes, the stream did not hold the batch yet."""
    envs, replies = await the_last_batch(engine, "x", "end", "x")
    assert replies[0].status == replies[1].status == "accepted"
    assert replies[2] == replies[0]
    [again] = await engine.handle([envs[0]])
    assert again == replies[0]
