"""Fair chance (issue #10; README, Fair chance): the game's chance is the server's committed seed mixed with every
seat's entropy, fixed at the start; a chosen seed needs ``unfair``, which every reader sees."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from contracts.table import CreateGame, GameEnded, GameStarted, JoinSeat, LeaveSeat, SeatJoined
from domain import table as tbl
from domain.chance import Chance, chance_hash, game_seed, seed_hash
from domain.kernel import RuleViolation
from tests.domain.harness import token_hash

SERVER = bytes(range(32))


def entropy(n: int) -> str:
    return (bytes([n]) * 32).hex()


def started(name: str, entropies: list[str], server: bytes = SERVER, **create: Any) -> tuple[tbl.Table, list]:
    """A game with every seat taken, seat i giving ``entropies[i]``: the table and its events."""
    table, events = tbl.EMPTY, []

    def send(seat: int | None, command: Any) -> None:
        nonlocal table
        token = None if seat is None else token_hash(seat)
        new = tbl.decide(table, seat, token, command, Chance(server, table.version))
        for event in new:
            table = tbl.evolve(table, event)
        events.extend(new)

    send(None, CreateGame(name, "fair", len(entropies), **create))
    for seat, given in enumerate(entropies):
        send(None, JoinSeat(f"p{seat}", token_hash(seat), seat, entropy=given))
    return table, events


def setup_of(events: list) -> list:
    """The game's first events: what its chance dealt at the start."""
    start = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    return events[start + 1:]


def played(table: tbl.Table, server: bytes, commands: int, rng: random.Random) -> list:
    """``commands`` random legal commands through the table; the events."""
    game, out = tbl.game_of(table), []
    for _ in range(commands):
        if table.status != tbl.PLAYING:
            break
        seat = rng.choice(tbl.flow(table).awaiting)
        command = rng.choice(list(game.legal_commands(table.state, seat)))
        new = tbl.decide(table, seat, token_hash(seat), command, Chance(server, table.version))
        for event in new:
            table = tbl.evolve(table, event)
        out += new
    return out


def test_changing_any_one_seats_entropy_changes_the_deal():
    given = [entropy(1), entropy(2), entropy(3)]
    _, events = started("samarkand", given)
    for seat in range(3):
        other = [*given]
        other[seat] = entropy(9)
        assert setup_of(started("samarkand", other)[1]) != setup_of(events), f"seat {seat}'s entropy changed nothing"


def test_the_server_seed_alone_does_not_determine_the_outcomes():
    one = started("yspahan", [entropy(1), entropy(2)])
    two = started("yspahan", [entropy(1), entropy(4)])
    assert setup_of(one[1]) != setup_of(two[1])
    assert game_seed(SERVER, [entropy(1), entropy(2)]) not in (SERVER, game_seed(SERVER, [entropy(1), entropy(4)]))
    # and the same entropy with another server seed: another deal too
    assert setup_of(started("yspahan", [entropy(1), entropy(2)], server=bytes(32))[1]) != setup_of(one[1])


def test_every_draw_after_the_start_comes_from_the_mixed_seed():
    given = [entropy(5), "", entropy(7)]
    table, _ = started("samarkand", given)
    mixed = game_seed(SERVER, given)
    game = tbl.game_of(table)
    rng = random.Random(3)
    for _ in range(80):
        if table.status != tbl.PLAYING:
            break
        seat = rng.choice(tbl.flow(table).awaiting)
        command = rng.choice(list(game.legal_commands(table.state, seat)))
        events = tbl.decide(table, seat, token_hash(seat), command, Chance(SERVER, table.version))
        rules = list(game.decide(table.state, seat, command, Chance(mixed, table.version)))
        assert [e for e in events if not isinstance(e, GameEnded)] == rules
        for event in events:
            table = tbl.evolve(table, event)
    # the later draws differ with another seat's entropy: the whole game's chance follows the mix
    rng_a, rng_b = random.Random(8), random.Random(8)
    a = played(started("samarkand", given)[0], SERVER, 60, rng_a)
    b = played(started("samarkand", [entropy(5), entropy(6), entropy(7)])[0], SERVER, 60, rng_b)
    assert a != b


def test_the_start_commits_to_the_mix_and_each_seat_publishes_its_entropy():
    given = [entropy(1), entropy(2), ""]
    table, events = started("samarkand", given)
    joined = [e for e in events if isinstance(e, SeatJoined)]
    assert [e.entropy for e in joined] == given
    assert all(tbl.redact(table, e, None).entropy == e.entropy for e in joined)  # public: everyone sees it
    [start] = [e for e in events if isinstance(e, GameStarted)]
    assert start.chance_hash == seed_hash(game_seed(SERVER, given)) == chance_hash(SERVER, given)
    assert table.mix == tuple(given)
    # nobody gave entropy: the chance is the server's seed, committed at creation, as before fair chance
    _, plain = started("samarkand", ["", "", ""])
    assert [e for e in plain if isinstance(e, GameStarted)] == [GameStarted()]
    assert game_seed(SERVER, ["", "", ""]) == SERVER


def test_entropy_given_in_capitals_is_kept_in_lowercase_and_anything_else_is_refused():
    table, events = started("samarkand", ["AB" * 32, "", ""])
    assert events[1].entropy == "ab" * 32 and table.players[0].entropy == "ab" * 32
    open_table = tbl.fold(events[:1])
    for bad in ("ab", "zz" * 32, "ab" * 33, "ab" * 31):
        with pytest.raises(RuleViolation) as info:
            tbl.decide(open_table, None, None, JoinSeat("p", token_hash(0), entropy=bad), Chance(SERVER, 1))
        assert info.value.code == "bad_entropy"


def test_a_seat_that_leaves_takes_its_entropy_with_it():
    table, events = tbl.EMPTY, []
    for command in (CreateGame("yspahan", "t", 2), JoinSeat("a", token_hash(0), 0, entropy=entropy(1))):
        for event in tbl.decide(table, None, None, command, Chance(SERVER, table.version)):
            table = tbl.evolve(table, event)
            events.append(event)
    for event in tbl.decide(table, 0, token_hash(0), LeaveSeat(), Chance(SERVER, table.version)):
        table = tbl.evolve(table, event)
    assert tbl.entropies(table) == ("", "")


@pytest.mark.parametrize("name", ["samarkand", "yspahan"])
def test_a_chosen_seed_is_refused_without_unfair_saying_what_to_add(name):
    with pytest.raises(RuleViolation) as info:
        tbl.decide(tbl.EMPTY, None, None, CreateGame(name, "t", 3, seed="ab" * 32), Chance(SERVER, 0))
    assert info.value.code == "seed_needs_unfair"
    assert '"unfair": true' in info.value.message
    # the length is still checked once unfair is given
    with pytest.raises(RuleViolation) as short:
        tbl.decide(tbl.EMPTY, None, None, CreateGame(name, "t", 3, seed="ab", unfair=True), Chance(SERVER, 0))
    assert short.value.code == "bad_seed"


def test_an_unfair_game_says_so_in_every_view_and_a_fair_one_does_not():
    unfair, _ = started("samarkand", ["", "", ""], unfair=True, seed=SERVER.hex())
    assert unfair.unfair and all(v.unfair for v in tbl.views(unfair, "g").values())
    fair, _ = started("samarkand", [entropy(1), entropy(2), entropy(3)])
    assert not fair.unfair and not any(v.unfair for v in tbl.views(fair, "g").values())


def test_the_mix_is_checked_from_the_events_and_a_changed_entropy_or_seed_fails():
    given = [entropy(1), entropy(2), entropy(3)]
    table, events = started("samarkand", given)
    events += played(table, SERVER, 40, random.Random(1))
    assert tbl.check_chance(events, SERVER) == []
    tampered = [msgspec.structs.replace(e, entropy=entropy(4)) if isinstance(e, SeatJoined) and e.seat == 1 else e
                for e in events]
    assert tbl.check_chance(tampered, SERVER) == [
        "the game's chance is not the server seed mixed with the seats' entropy it started with"]
    assert tbl.check_chance(events, bytes(32)) == [
        "the server seed does not match the commitment published at creation",
        "the game's chance is not the server seed mixed with the seats' entropy it started with"]
    hidden = [msgspec.structs.replace(e, chance_hash="") if isinstance(e, GameStarted) else e for e in events]
    assert tbl.check_chance(hidden, SERVER) != []


def test_prepared_hmacs_give_the_same_bytes_as_the_plain_formulas():
    """The game's seed is derived once per seed and entropies (cached) and the commitments' salts come from an HMAC
    prepared once per seed and game and copied: their bytes, and the draws', are still the documented formulas'
    (records re-execute byte for byte)."""
    import hashlib
    import hmac

    from contracts.envelope import commitment, commitment_salt
    from domain.chance import _MIX, Chance, game_seed

    for seed in (b"\x00" * 32, bytes(range(32)), b"k" * 64 + b"longer than a block" * 5):
        entropies = ("ab" * 32, "", "cd" * 32)
        for _ in range(2):  # the second time from the caches
            assert game_seed(seed, list(entropies)) == hmac.new(
                seed, _MIX + b"|" + "|".join(entropies).encode(), hashlib.sha256).digest()
            assert game_seed(seed, ("", "")) == seed
            chance = Chance(seed, 17)
            draws = [chance._next64() for _ in range(5)]
            assert draws == [int.from_bytes(hmac.new(seed, f"17:{i}".encode(), hashlib.sha256).digest()[:8], "big")
                             for i in range(5)]
            for game_id, seq in (("g1", 1), ("g1", 12), ("g2", 12), ("g1:2", 3)):
                salt = hmac.new(seed, f"commit:{game_id}:{seq}".encode(), hashlib.sha256).digest()
                assert commitment_salt(seed, game_id, seq) == salt
                assert commitment(seed, game_id, seq, b"{}") == hashlib.sha256(salt + b"{}").hexdigest()
