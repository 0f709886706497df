"""Istanbul: Choose & Write over HTTP with the Python SDK, against a real `souk serve` and Redis.

Solo, played to the end; with 3 seats, every seat a client, the seats a played card awaits answering at the same
moment (no expected version: each answer concerns its own sheet, so every one is accepted). Along the way, for
every seat and the spectator: the view, the legal commands and the history agree on the version; a seat is
offered commands exactly when the flow awaits it; nobody's view or history shows another seat's cards or its
answer before the turn resolves (``docs/rules-decisions.md``, Istanbul: A turn).
"""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest

from contracts import istanbul
from contracts.api import Joined
from contracts.readmodels import TableView
from services.client import Seat, SoukClient, SoukError
from services.history.audit import verify_audit

pytestmark = pytest.mark.anyio

# The events that name a card only its owner may see (None for everyone else), and the field that names it.
SECRET = {istanbul.LocationDealt: "card", istanbul.GuildDrawn: "card", istanbul.GoodsCardDrawn: "card",
          istanbul.GuildKept: "kept"}


class Watch:
    """Everything the game's readers (each seat, the spectator) are served, checked as it comes; each reader's
    history is read on from where it was left."""

    def __init__(self, souk: SoukClient, game_id: str, players: list[Seat]) -> None:
        self.souk, self.game_id, self.players = souk, game_id, players
        self.histories: dict[int | None, list] = {reader: [] for reader in (*range(len(players)), None)}

    async def views(self, version: int) -> dict[int | None, TableView]:
        """Every seat's view and the spectator's, each at ``version`` at least (the legal commands and the
        histories checked too when ``full``)."""
        got = await asyncio.gather(*(p.view(min_version=version) for p in self.players),
                                   self.souk.view(self.game_id, version))
        seen = {**{p.seat: v for p, v in zip(self.players, got)}, None: got[-1]}
        check_views(seen)
        return seen

    async def everything(self, version: int) -> dict[int | None, TableView]:
        seen = await self.views(version)
        for player in self.players:  # GET …/legal is the view's legal list, at the same version
            answer = await player.legal()
            assert (answer.version, answer.legal) == (seen[player.seat].version, seen[player.seat].legal)
        for reader, events in self.histories.items():
            seat = self.players[reader] if reader is not None else None
            entries = seat.entries(len(events)) if seat is not None else self.souk.entries(self.game_id, len(events))
            new = [e.event async for e in entries]
            check_history(new, reader)
            events += new
            assert len(events) >= seen[None].version
        return seen


def check_views(seen: dict[int | None, TableView]) -> None:
    """One version everywhere; commands offered exactly to the awaited seats; each seat sees its own cards only
    (the others' hands are counts) and its own answer only."""
    [_] = {v.version for v in seen.values()}
    spectator = seen[None]
    for reader, table in seen.items():
        view = table.view
        assert isinstance(view, istanbul.IstanbulView) and view.seat == reader
        assert table.flow == spectator.flow and view.players == spectator.view.players
        if reader is None:
            assert view.you is None and table.legal == ()
            continue
        you = view.you
        assert you.seat == reader and len(you.hand) == view.players[reader].hand
        assert len(you.guild_cards) == view.players[reader].guild_cards
        assert len(you.goods_cards) == view.players[reader].goods_cards
        assert view.players[reader].answered == (you.answer is not None or you.took_bonus)
        assert bool(table.legal) == (reader in table.flow.awaiting)


def check_history(events: list, reader: int | None) -> None:
    """No entry names a card of another seat; an answer is the reader's own, or hidden (until the turn resolves:
    ``Acted`` or ``BonusTaken`` then show it to all); no deck's order."""
    for event in events:
        field = SECRET.get(type(event))
        if field is not None and event.seat != reader:
            assert getattr(event, field) is None, (reader, event)
        if isinstance(event, istanbul.LocationDealt) and event.seat == reader:
            assert event.card is not None
        if isinstance(event, istanbul.Answered):
            hidden = event.action is None and event.bonus is None
            assert hidden == (event.seat != reader), (reader, event)
        if isinstance(event, (istanbul.DeckShuffled, istanbul.GoodsDeckShuffled)):
            assert event.order is None


async def play(watch: Watch, rng: random.Random, commands: int) -> tuple[TableView, dict[str, int]]:
    """Up to ``commands`` commands. When a played card awaits several seats, all but one answer at once, the
    others check that those answers are hidden, then the last answers and the turn resolves. Every reader's
    legal commands and history are checked every 4th command and at the end."""
    players = watch.players
    counts = {"commands": 0, "together": 0, "hidden_checks": 0}
    seen = await watch.everything(0)
    while seen[None].status == "playing" and counts["commands"] < commands:
        awaiting = seen[None].flow.awaiting
        assert awaiting, "a game in play awaits nobody"
        chosen = {s: rng.choice(seen[s].legal) for s in awaiting}
        if len(awaiting) > 1:
            first, last = list(awaiting[:-1]), awaiting[-1]
            replies = await asyncio.gather(*(players[s].send(chosen[s], expected_version=None) for s in first))
            assert all(r.status == "accepted" for r in replies), replies
            counts["together"] += len(first)
            seen = await watch.everything(max(r.version for r in replies))
            if seen[None].flow.phase == "act":  # the answers given are secret until the last one
                assert all(seen[None].view.players[s].answered for s in first)
                counts["hidden_checks"] += 1
            reply = await players[last].send(chosen[last], expected_version=None)
            counts["commands"] += len(awaiting)
        else:
            [seat] = awaiting
            reply = await players[seat].send(chosen[seat])
            counts["commands"] += 1
        assert reply.status == "accepted", reply
        seen = await (watch.everything if counts["commands"] % 4 == 0 else watch.views)(reply.version)
    return (await watch.everything(seen[None].version))[None], counts


async def test_a_solo_game_of_istanbul_is_played_to_the_end_over_http(souk_url):
    async with SoukClient(souk_url) as souk:
        [info] = [g for g in await souk.catalog() if g.name == "istanbul"]
        assert (info.title, info.min_seats, info.max_seats, info.options) == (
            "Istanbul: Choose & Write", 1, 5, {"undo": "own_turn", "rules": 2})  # the table's, the rules' revision
        created = await souk.create("istanbul", "solo", 1, seed="1507" * 16, unfair=True)
        players = [await souk.join(created.game_id, "solo")]
        watch = Watch(souk, created.game_id, players)
        final, counts = await play(watch, random.Random(3), commands=400)
        assert final.status == "over" and counts["commands"] > 20, counts
        assert final.result is not None and len(final.result.scores) == 1 and final.result.winners == (0,)
        assert final.view.scores[0].rubies == final.result.scores[0] and final.view.column in (None, 10, 11, 12)
        assert set(final.view.challenges) <= set(range(1, 15))
        with pytest.raises(SoukError) as refused:
            await players[0].send(istanbul.TakeBonus(), expected_version=None)
        assert (refused.value.status, refused.value.code) == (422, "game_over")
        audit = await souk.audit(created.game_id)  # the end reveals every card: the hand's were the seat's own
        assert verify_audit(msgspec.to_builtins(audit)) == []
        own = [e for e in watch.histories[0] if isinstance(e, istanbul.LocationDealt)]
        dealt = [msgspec.json.decode(msgspec.json.encode(e["payload"]), type=istanbul.LocationDealt)
                 for e in audit.events if e["type"] == "istanbul.LocationDealt"]
        assert own == dealt and all(e.card is not None for e in own)


async def test_three_seats_answer_a_card_at_once_and_see_only_their_own_secrets_over_http(souk_url):
    async with SoukClient(souk_url) as souk:
        created = await souk.create("istanbul", "three", 3, seed="3a7e" * 16, unfair=True)
        players = [await souk.join(created.game_id, f"p{i}") for i in range(3)]
        last, counts = await play(Watch(souk, created.game_id, players), random.Random(5), commands=40)
        assert last.status == "playing" and counts["together"] >= 10 and counts["hidden_checks"] >= 3, counts

        # a seat not awaited is refused with its code; a seat's token does not act for another
        idle = next(s for s in range(3) if s not in last.flow.awaiting) if len(last.flow.awaiting) < 3 else None
        if idle is not None:
            with pytest.raises(SoukError) as refused:
                await players[idle].send(istanbul.TakeBonus(), expected_version=None)
            assert refused.value.status == 422 and refused.value.code in ("not_your_turn", "wrong_phase")
        thief = Seat(souk, "istanbul", Joined(created.game_id, 1, players[0].token, 0))
        with pytest.raises(SoukError) as refused:
            await thief.legal()
        assert refused.value.status in (401, 403)
        assert (await souk.view(created.game_id)).version == last.version  # nothing refused was written
