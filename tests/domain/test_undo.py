"""Undo, as a policy the platform enforces for every game (issue #10; docs/rules-decisions.md, Undo).

Given a table played command by command (each event folded with the seat and id of its command, as the engine
does), when a seat sends RequestUndo / AcceptUndo / DeclineUndo, then these events, or this error code.
"""

from __future__ import annotations

import msgspec
import pytest

from contracts.samarkand import CardChosen, CardsRevealed, ChooseCard
from contracts.table import (
    AcceptUndo,
    CreateGame,
    DeclineUndo,
    GameCreated,
    RequestUndo,
    UndoAccepted,
    UndoApplied,
    UndoDeclined,
    UndoneRange,
    UndoRequest,
    UndoRequested,
)
from contracts.yspahan import (
    CardDrawn,
    CardPlayed,
    DeckShuffled,
    DiceRolled,
    DiceSelected,
    EndTurn,
    PlayCard,
    RollDice,
    SelectDice,
)
from domain import kernel
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from tests.domain.harness import Played, encoded, token_hash

SAMARKAND = get_game("samarkand")
YSPAHAN = get_game("yspahan")


def state_at(played: Played, version: int):
    """The game state of the fold of the first ``version`` events (no origins needed)."""
    return tbl.fold(played.events[:version]).state


def moves(played: Played, seat: int, barrier: bool) -> list:
    """The legal commands of ``seat`` whose events hold (or hold no) undo barrier."""
    out = []
    for command in played.legal(seat):
        events = played.decide(seat, command)
        if any(kernel.is_barrier(played.game, e) for e in events) == barrier:
            out.append(command)
    return out


def rolled_yspahan(undo: str = "own_turn", seats: int = 3) -> tuple[Played, int]:
    """A Yspahan table whose first player just rolled the dice (a barrier); returns it and that seat."""
    played = Played(YSPAHAN, seats, {"undo": undo})
    seat = tbl.flow(played.table).awaiting[0]
    [rolled] = played.send(seat, RollDice(yellow=0))
    assert isinstance(rolled, DiceRolled)
    return played, seat


def own_moves(played: Played, seat: int, count: int) -> list[int]:
    """``seat`` plays ``count`` commands holding no barrier (a line of them found by a small search); returns
    the version before each."""
    line = _line(played.table, played.game, seat, count)
    assert line is not None, f"seat {seat} has no {count} moves in a row without a barrier"
    before = []
    for command in line:
        before.append(played.table.version)
        played.send(seat, command)
    return before


def _line(table, game, seat: int, count: int) -> list | None:
    if count == 0:
        return []
    if seat not in tbl.flow(table).awaiting:
        return None
    for command in game.legal_commands(table.state, seat):
        events = tbl.decide(table, seat, token_hash(seat), command, Chance(b"seed", table.version))
        if any(kernel.is_barrier(game, e) for e in events):
            continue
        rest = _line(tbl.fold(events, table), game, seat, count - 1)
        if rest is not None:
            return [command, *rest]
    return None


def chosen_samarkand(undo: str, seats: int = 3) -> tuple[Played, list[int]]:
    """A Samarkand table in its first choosing phase where every seat but the last chose a card (CardChosen is
    no barrier); returns it and the versions before each choice."""
    played = Played(SAMARKAND, seats, {"undo": undo})
    before = []
    for seat in range(seats - 1):
        before.append(played.table.version)
        [chosen] = played.send(seat, played.legal(seat)[0])
        assert isinstance(chosen, CardChosen)
    return played, before


# --- own turn ------------------------------------------------------------------------------------------------


def test_a_seat_takes_back_its_own_moves_since_the_last_barrier_at_once():
    played, seat = rolled_yspahan()
    after_roll = played.table.version
    own_moves(played, seat, 2)
    now = played.table.version
    assert tbl.undo_targets(played.table, seat)[-1] == after_roll

    events = played.send(seat, RequestUndo(to_version=after_roll))

    assert events == [UndoApplied(to_version=after_roll, by_seat=seat)]
    assert encoded(played.table.state) == encoded(state_at(played, after_roll))
    assert played.table.undone == (UndoneRange(after_roll + 1, now, seat),)
    assert len(played.events) == now + 1  # the log keeps the undone events and the undo itself
    assert played.table.version == now + 1


def test_a_seat_takes_back_only_its_last_command():
    played, seat = rolled_yspahan()
    first, second = own_moves(played, seat, 2)
    played.send(seat, RequestUndo(to_version=second))
    assert encoded(played.table.state) == encoded(state_at(played, second))
    assert tbl.undo_targets(played.table, seat) == (first,)  # and then the one before it


def test_an_undo_goes_back_over_an_earlier_undo():
    played, seat = rolled_yspahan()
    first, second = own_moves(played, seat, 2)
    played.send(seat, RequestUndo(to_version=second))
    own_moves(played, seat, 1)  # another move instead
    played.send(seat, RequestUndo(to_version=first))
    assert encoded(played.table.state) == encoded(state_at(played, first))
    assert [r.first for r in played.table.undone] == [first + 1]  # the latest (the log has both)
    assert [r.first for r in tbl.undone_ranges(played.events)] == [second + 1, first + 1]


def test_the_undo_window_survives_a_snapshot_and_replay_from_the_log():
    played, seat = rolled_yspahan()
    first, _ = own_moves(played, seat, 2)
    played.send(seat, RequestUndo(to_version=first))
    assert encoded(tbl.fold(played.events, origins=played.origins)) == encoded(played.table)
    assert encoded(tbl.decode_table(tbl.encode_table(played.table))) == encoded(played.table)


def test_a_table_folded_without_origins_folds_undos_the_same_but_grants_none():
    played, seat = rolled_yspahan()
    first, _ = own_moves(played, seat, 2)
    played.send(seat, RequestUndo(to_version=first))
    own_moves(played, seat, 1)
    blind = tbl.fold(played.events)
    assert encoded(blind.state) == encoded(played.table.state) and blind.undone == played.table.undone
    assert tbl.undo_targets(blind, seat) == ()
    with pytest.raises(kernel.RuleViolation) as info:
        tbl.decide(blind, seat, token_hash(seat), RequestUndo(first), Chance(b"s", blind.version))
    assert info.value.code == "bad_undo_version"


def test_an_undo_to_the_middle_of_a_command_or_to_nothing_is_refused():
    played, seat = rolled_yspahan()
    before = own_moves(played, seat, 1)[0]
    if played.table.version - before >= 2:  # a command of several events: not back to between them
        assert played.refused(seat, RequestUndo(to_version=before + 1)) == "bad_undo_version"
    assert played.refused(seat, RequestUndo(to_version=played.table.version)) == "bad_undo_version"
    assert played.refused(seat, RequestUndo(to_version=played.table.version + 5)) == "bad_undo_version"
    assert played.refused(seat, RequestUndo(to_version=-1)) == "bad_undo_version"


def test_own_turn_refuses_to_take_back_a_move_another_seat_answered():
    played, before = chosen_samarkand("own_turn")
    assert played.refused(0, RequestUndo(to_version=before[0])) == "undo_not_allowed"  # seat 1 chose since
    assert tbl.undo_targets(played.table, 0) == ()
    assert tbl.undo_targets(played.table, 1) == (before[1],)
    assert played.send(1, RequestUndo(to_version=before[1])) == [UndoApplied(before[1], 1)]


def test_a_seat_may_not_take_back_another_seats_move():
    played, before = chosen_samarkand("with_consent")
    assert played.refused(0, RequestUndo(to_version=before[1])) == "undo_not_allowed"  # seat 1's choice


# --- with consent ----------------------------------------------------------------------------------------------


def test_with_consent_the_other_seats_are_asked_and_the_last_agreement_applies_the_undo():
    played, before = chosen_samarkand("with_consent", seats=4)
    v = before[0]

    assert played.send(0, RequestUndo(to_version=v)) == [UndoRequested(seat=0, to_version=v, asked=(1, 2, 3))]
    assert played.table.request == UndoRequest(0, v, (1, 2, 3))
    assert all(view.undo.request == played.table.request for view in tbl.views(played.table, "g").values())
    assert played.send(2, AcceptUndo()) == [UndoAccepted(2)]
    assert played.send(1, AcceptUndo()) == [UndoAccepted(1)]
    requested_at = played.table.version - 2
    assert played.send(3, AcceptUndo()) == [UndoAccepted(3), UndoApplied(to_version=v, by_seat=0)]

    assert encoded(played.table.state) == encoded(state_at(played, v))
    assert played.table.request is None
    assert played.table.undone == (UndoneRange(v + 1, played.table.version - 1, 0),)
    assert requested_at in range(v + 1, played.table.version)  # the request falls inside the undone range
    assert played.legal(0)  # seat 0 chooses again


def test_a_decline_ends_the_request_and_changes_nothing():
    played, before = chosen_samarkand("with_consent")
    state = encoded(played.table.state)
    played.send(0, RequestUndo(to_version=before[0]))
    played.send(1, AcceptUndo())
    assert played.send(2, DeclineUndo()) == [UndoDeclined(2)]
    assert played.table.request is None and encoded(played.table.state) == state and not played.table.undone
    assert played.refused(1, AcceptUndo()) == "no_undo_request"
    assert played.send(0, RequestUndo(to_version=before[0]))  # asked again: a new request


def test_the_requester_withdraws_its_request_with_a_decline():
    played, before = chosen_samarkand("with_consent")
    played.send(0, RequestUndo(to_version=before[0]))
    assert played.send(0, DeclineUndo()) == [UndoDeclined(0)]
    assert played.table.request is None


def test_any_new_game_command_ends_the_request():
    played, before = chosen_samarkand("with_consent")
    played.send(0, RequestUndo(to_version=before[0]))
    last = played.table.seats - 1
    events = played.send(last, played.legal(last)[0])  # the last choice: every card is revealed
    assert isinstance(events[-1], CardsRevealed) or any(isinstance(e, CardsRevealed) for e in events)
    assert played.table.request is None
    assert played.refused(1, AcceptUndo()) == "no_undo_request"


def test_answers_are_checked_a_second_request_waits_and_tokens_count():
    played, before = chosen_samarkand("with_consent", seats=4)
    played.send(0, RequestUndo(to_version=before[0]))
    assert played.refused(0, AcceptUndo()) == "not_asked"  # the requester does not answer its own request
    assert played.refused(1, RequestUndo(to_version=before[1])) == "undo_pending"
    played.send(1, AcceptUndo())
    assert played.refused(1, AcceptUndo()) == "already_answered"
    assert played.refused(1, DeclineUndo()) == "already_answered"
    assert played.refused(2, AcceptUndo(), token=token_hash(3)) == "bad_token"
    assert played.refused(7, AcceptUndo(), token=token_hash(7)) == "no_such_seat"


def test_with_consent_a_seats_own_moves_are_still_taken_back_at_once():
    played, seat = rolled_yspahan("with_consent")
    [before] = own_moves(played, seat, 1)
    assert played.send(seat, RequestUndo(to_version=before)) == [UndoApplied(before, seat)]


# --- barriers and policies ----------------------------------------------------------------------------------


@pytest.mark.parametrize("undo", ["own_turn", "with_consent"])
def test_an_undo_across_a_barrier_is_refused_whatever_the_policy(undo):
    played, seat = rolled_yspahan(undo)
    before_roll = played.table.version - 1
    own_moves(played, seat, 1)
    assert played.refused(seat, RequestUndo(to_version=before_roll)) == "undo_not_allowed"
    assert played.refused(seat, RequestUndo(to_version=3)) == "undo_not_allowed"  # before the game started
    assert all(v > before_roll for v in tbl.undo_targets(played.table, seat))


def test_an_undo_across_a_reveal_is_refused_even_with_every_seats_consent():
    played, before = chosen_samarkand("with_consent")
    last = played.table.seats - 1
    played.send(last, played.legal(last)[0])  # CardsRevealed: every chosen card is shown
    for seat in range(played.table.seats):
        assert played.refused(seat, RequestUndo(to_version=before[0])) == "undo_not_allowed"
        assert tbl.undo_targets(played.table, seat) == ()


def test_policy_none_refuses_every_undo():
    played, seat = rolled_yspahan("none")
    [before] = own_moves(played, seat, 1)
    assert played.refused(seat, RequestUndo(to_version=before)) == "undo_not_allowed"
    assert tbl.undo_targets(played.table, seat) == ()
    assert tbl.views(played.table, "g")[seat].undo.policy == "none"


@pytest.mark.parametrize("policy", ["", "None", "always", 3, None])
def test_a_bad_undo_policy_is_refused_at_creation(policy):
    with pytest.raises(kernel.RuleViolation) as info:
        tbl.decide(tbl.EMPTY, None, None, CreateGame("samarkand", "t", 3, {"undo": policy}), Chance(b"s", 0))
    assert info.value.code == "bad_undo_policy" and "own_turn" in info.value.message


def test_the_policy_is_stored_beside_the_games_options_and_defaults_to_own_turn():
    [event] = tbl.decide(tbl.EMPTY, None, None, CreateGame("samarkand", "t", 3, {"undo": "with_consent",
                                                                                  "hidden_goods": True}),
                         Chance(b"s", 0))
    assert isinstance(event, GameCreated) and event.undo == "with_consent" and "undo" not in event.options
    assert tbl.fold([event]).undo == "with_consent" and tbl.fold([event]).options.hidden_goods
    [default] = tbl.decide(tbl.EMPTY, None, None, CreateGame("samarkand", "t", 3), Chance(b"s", 0))
    assert default.undo == "own_turn"
    stored_before_undo = msgspec.json.encode({k: v for k, v in msgspec.to_builtins(default).items() if k != "undo"})
    assert msgspec.json.decode(stored_before_undo, type=GameCreated).undo == "own_turn"


def test_undo_commands_need_a_game_in_play():
    played = Played(SAMARKAND, 3)
    opened = tbl.fold(played.events[:2])
    with pytest.raises(kernel.RuleViolation) as info:
        tbl.decide(opened, 0, token_hash(0), RequestUndo(1), Chance(b"s", 2))
    assert info.value.code == "game_not_started"
    from tests.domain.harness import playout

    over, _ = playout(SAMARKAND, 3, seed=5)
    with pytest.raises(kernel.RuleViolation) as info:
        tbl.decide(over, 0, token_hash(0), RequestUndo(over.version - 2), Chance(b"s", over.version))
    assert info.value.code == "game_over"
    assert over.window is None


def test_a_game_without_the_hook_gets_every_event_as_a_barrier(monkeypatch):
    played, seat = rolled_yspahan()
    [before] = own_moves(played, seat, 1)
    monkeypatch.delattr(type(YSPAHAN), "is_barrier")
    assert kernel.is_barrier(YSPAHAN, EndTurn()) is True
    blind = tbl.fold(played.events, origins=played.origins)
    assert tbl.undo_targets(blind, seat) == ()
    with pytest.raises(kernel.RuleViolation) as info:
        tbl.decide(blind, seat, token_hash(seat), RequestUndo(before), Chance(b"s", blind.version))
    assert info.value.code == "undo_not_allowed"


def test_the_window_keeps_at_most_max_window_events(monkeypatch):
    played, seat = rolled_yspahan()
    v0, v1, v2 = own_moves(played, seat, 3)
    monkeypatch.setattr(tbl, "MAX_WINDOW", played.table.version - v1)  # the last two commands' events
    table = tbl.fold(played.events, origins=played.origins)
    window = table.window
    assert window.anchor.version == v1 and len(window.steps) == tbl.MAX_WINDOW
    assert encoded(window.base) == encoded(state_at(played, v1))
    assert tbl.undo_targets(table, seat) == (v2, v1)
    played.table = table
    assert played.refused(seat, RequestUndo(to_version=v0)) == "undo_not_allowed"
    played.send(seat, RequestUndo(to_version=v1))
    assert encoded(played.table.state) == encoded(state_at(played, v1))


# --- each game's barriers ------------------------------------------------------------------------------------


def test_yspahans_barriers_are_its_chance_and_the_cards_it_shows():
    barrier = YSPAHAN.is_barrier
    assert barrier(DeckShuffled(order=(), size=0)) and barrier(DiceRolled(0, (1, 2), ()))
    assert barrier(CardDrawn(0, "take_gold")) and barrier(CardPlayed(0, "take_gold"))
    assert barrier(DiceSelected(0, "bag", "floor", discard="take_gold"))  # the card discarded is shown
    assert not barrier(DiceSelected(0, "bag", "floor"))
    from contracts import yspahan as y

    plain = {y.DayBegan, y.CamelsTaken, y.GoldTaken, y.PlacementBegan, y.CubePlaced, y.SupervisorMoved,
             y.ShipmentChosen, y.CubeShipped, y.GoodsSold, y.GoodsExchanged, y.BuildingBuilt, y.ActionEnded,
             y.TurnEnded, y.SouksScored, y.CaravanScored, y.WeekEnded}
    assert plain | {DeckShuffled, DiceRolled, CardDrawn, CardPlayed, DiceSelected} == set(y.EVENTS)


def test_samarkands_barriers_are_its_chance_and_its_reveals():
    from contracts import samarkand as s

    barriers = {s.MarketSetUp, s.CamelDeckShuffled, s.BankDeckShuffled, s.CamelTurned, s.BankCardTurned,
                s.CardsRevealed, s.ValueClosed, s.GoodsBought, s.CamelBought, s.StopFined, s.GoodsDisputed,
                s.CamelDisputed, s.ScoringStarted}
    plain = {s.RoundStarted, s.CardChosen, s.Answered, s.RoundEnded, s.GoodsDiscarded, s.LeastBoughtChosen,
             s.GameScored}
    assert barriers | plain == set(s.EVENTS)
    from tests.domain.harness import playout

    events = [e for seed in (1, 2) for e in playout(SAMARKAND, 3, seed=seed)[1] if type(e) in s.EVENTS]
    assert {type(e) for e in events} >= barriers - {s.StopFined, s.GoodsDisputed, s.CamelDisputed} | plain
    assert all(SAMARKAND.is_barrier(e) == (type(e) in barriers) for e in events)


def test_yspahan_a_card_drawn_cannot_be_taken_back():
    played, seat = rolled_yspahan()
    before = played.table.version
    draw = [c for c in played.legal(seat) if isinstance(c, SelectDice) and c.action == "card"]
    events = played.send(seat, draw[0])
    assert any(isinstance(e, CardDrawn) for e in events)
    assert played.refused(seat, RequestUndo(to_version=before)) == "undo_not_allowed"


def test_yspahan_a_card_played_cannot_be_taken_back():
    for seed in range(40):  # a game where the first player holds a card it may play before its dice
        played = Played(YSPAHAN, 3, seed=seed.to_bytes(2, "big"))
        seat = tbl.flow(played.table).awaiting[0]
        played.send(seat, RollDice(0))
        draw = [c for c in played.legal(seat) if isinstance(c, SelectDice) and c.action == "card"]
        played.send(seat, draw[0])
        if played.table.status != tbl.PLAYING or seat not in tbl.flow(played.table).awaiting:
            continue
        plays = [c for c in played.legal(seat) if isinstance(c, PlayCard)]
        if plays:
            break
    else:
        pytest.skip("no seed gave a card to play")
    before = played.table.version
    played.send(seat, plays[0])
    assert played.refused(seat, RequestUndo(to_version=before)) == "undo_not_allowed"


def test_samarkand_the_last_choice_reveals_every_card_and_cannot_be_taken_back():
    played, _ = chosen_samarkand("with_consent")
    last = played.table.seats - 1
    before = played.table.version
    played.send(last, ChooseCard(value=played.legal(last)[0].value))
    assert played.refused(last, RequestUndo(to_version=before)) == "undo_not_allowed"


def test_samarkand_an_answer_is_taken_back_before_its_value_closes():
    played, _ = chosen_samarkand("own_turn")
    last = played.table.seats - 1
    played.send(last, played.legal(last)[0])  # the reveal: the countdown starts
    seat = tbl.flow(played.table).awaiting[0]
    before = played.table.version
    [answered] = played.send(seat, played.legal(seat)[0])  # the first answer at 10 closes nothing
    assert not SAMARKAND.is_barrier(answered)
    assert played.send(seat, RequestUndo(to_version=before)) == [UndoApplied(before, seat)]
    assert seat in tbl.flow(played.table).awaiting and encoded(played.table.state) == encoded(state_at(played, before))


# --- views and history ---------------------------------------------------------------------------------------


def test_views_show_the_undone_range_to_every_reader_and_each_seat_its_own_targets():
    played, seat = rolled_yspahan()
    before = own_moves(played, seat, 2)
    views = tbl.views(played.table, "g")
    assert views[seat].undo.to_versions == tuple(reversed(before))
    assert all(views[s].undo.to_versions == () for s in views if s != seat)
    played.send(seat, RequestUndo(to_version=before[0]))
    views = tbl.views(played.table, "g")
    expected = (UndoneRange(before[0] + 1, played.table.version - 1, seat),)
    assert all(view.undo.undone == expected and view.undo.policy == "own_turn" for view in views.values())
    assert tbl.views(tbl.fold(played.events[:3]), "g")[None].undo is None  # before the start


def test_undo_events_hide_nothing_in_the_history():
    played, before = chosen_samarkand("with_consent")
    played.send(0, RequestUndo(to_version=before[0]))
    played.send(1, AcceptUndo())
    played.send(2, AcceptUndo())
    for event in played.events[-4:]:
        assert all(tbl.redact(played.table, event, s) is event for s in (None, 0, 1, 2))


# Istanbul solo offers few undos: a solo answer resolves the turn at once, a barrier (Acted or BonusTaken).
@pytest.mark.parametrize(("name", "seats", "seed", "undo", "offers"),
                         [("samarkand", 3, 5, "with_consent", 20), ("yspahan", 3, 6, "own_turn", 20),
                          ("yspahan", 2, 7, "with_consent", 20), ("istanbul", 3, 8, "with_consent", 20),
                          ("istanbul", 1, 9, "own_turn", 5)])
def test_a_request_is_granted_or_asked_exactly_for_the_versions_the_view_offers(name, seats, seed, undo, offers):
    seen = {"offered": 0}

    def check(played: Played) -> None:
        table = played.table
        low = table.window.anchor.version - 2 if table.window else 0
        for seat in range(seats):
            offered = tbl.undo_targets(table, seat)
            seen["offered"] += len(offered)
            accepted = set()
            for version in range(low, table.version + 2):
                try:
                    played.decide(seat, RequestUndo(to_version=version))
                    accepted.add(version)
                except kernel.RuleViolation as exc:
                    assert exc.code in ("undo_not_allowed", "bad_undo_version", "undo_pending"), exc.code
            assert accepted == set(offered), (seat, sorted(accepted), offered)

    from tests.domain.harness import play_with_undos

    play_with_undos(name, seats, seed, undo, commands=120, check=check)
    assert seen["offered"] > offers


# --- what undo costs (issue #18, item 11) ----------------------------------------------------------------------


def _undone_many(count: int) -> Played:
    """A Yspahan table whose first player, after its roll, played a move and took it back ``count`` times."""
    played, seat = rolled_yspahan()
    for _ in range(count):
        own_moves(played, seat, 1)
        played.send(seat, RequestUndo(to_version=tbl.undo_targets(played.table, seat)[0]))
    return played


def _undo_state(table: tbl.Table) -> int:
    """The bytes of the table's undo data: what was undone, the window and the pending request."""
    return len(msgspec.msgpack.encode((table.undone, table.window, table.request)))


def test_a_view_and_the_undo_state_do_not_grow_with_the_number_of_undos():
    few, many = _undone_many(10), _undone_many(1_000)
    assert many.table.version > few.table.version + 1_000
    # Only the versions' digits may differ (a few bytes); before, every undo added its range to every view.
    for seat in (None, 0, 1, 2):
        small = len(msgspec.json.encode(tbl.views(few.table, "g")[seat]))
        big = len(msgspec.json.encode(tbl.views(many.table, "g")[seat]))
        assert big - small <= 16, (seat, small, big)
    assert _undo_state(many.table) - _undo_state(few.table) <= 16
    last = many.table.version
    [latest] = many.table.undone  # the latest undo only: back to just after the roll, each time
    assert (latest.first, latest.last) == (few.table.undone[0].first, last - 1)


def test_the_undone_ranges_are_read_from_the_events():
    played, seat = rolled_yspahan()
    first, second = own_moves(played, seat, 2)
    played.send(seat, RequestUndo(to_version=second))
    ranges = list(played.table.undone)
    own_moves(played, seat, 1)
    played.send(seat, RequestUndo(to_version=first))
    ranges += played.table.undone
    assert [(r.first, r.last) for r in ranges] == [(second + 1, ranges[0].last), (first + 1, played.table.version - 1)]
    assert tbl.undone_ranges(played.events) == ranges
    assert tbl.undone_ranges(played.events[4:], first_version=5) == ranges
