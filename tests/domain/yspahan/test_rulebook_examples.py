"""The rulebook's worked examples, each a test named after it (seats: Bleu 0, Vert 1, Rouge 2, Jaune 3)."""

from __future__ import annotations

from contracts.yspahan import (
    ActionEnded,
    Build,
    BuildingBuilt,
    CamelsTaken,
    CaravanScored,
    CubePlaced,
    CubeShipped,
    DiceSelected,
    EndTurn,
    GoldTaken,
    LetCubeGo,
    MoveSupervisor,
    PlaceCube,
    PlacementBegan,
    SelectDice,
    SoukCompleted,
    SouksScored,
    SupervisorMoved,
    TurnEnded,
)
from domain.yspahan import GAME
from domain.yspahan.rules import build_tower, flow, legal_commands
from domain.yspahan.scoring import caravan_points, complete_souks
from tests.domain.harness import Spec
from tests.domain.yspahan.support import (
    BLEU,
    JAUNE,
    ROUGE,
    VERT,
    built,
    camels,
    caravan,
    cubes,
    gold,
    new_day,
    opening,
    roll,
    supervisor_at,
)


def act(spec: Spec, seat: int, command) -> list:
    events = spec.decide(seat, command)
    spec.given(events)
    return events


def the_example_table() -> Spec:
    """The city before the example's day: Bleu started the Coffre's yellow souk (A free), Rouge its blue souk
    (B free), the pink souk is empty; Bleu waits on a shop facing both squares A, Jaune has two Sac shops;
    Jaune already built the Enclos and the Bazar and holds camels and gold; the supervisor is on N2."""
    return Spec(GAME, 4).given(
        opening(4)[:1]
        + [supervisor_at("N2")]
        + cubes(BLEU, "CHEST-3.1", "CHEST-3.2", "BARREL-2.1")
        + cubes(ROUGE, "CHEST-2.1")
        + cubes(JAUNE, "BAG-3.1", "BAG-3.3")
        + built(JAUNE, "pen", "bazaar")
        + [camels(JAUNE, 3), gold(JAUNE, 2)]
        + [new_day(4, first=BLEU)]
    )


def test_the_tower_example_with_two_yellow_dice():
    # Bleu paid 2 gold for two yellow dice and rolled three 1, one 2 (yellow), two 3, two 5, three 6.
    spec = the_example_table().given([roll(BLEU, 1, 1, 3, 3, 5, 5, 6, 6, 6, yellow=(1, 2))])
    tower = spec.state.tower
    assert tower == ((1, 2, 1), (2, 0, 1), (3, 2, 0), (5, 2, 0), (0, 0, 0), (6, 3, 0))  # the Vase is skipped
    assert spec.state.players[BLEU].gold == 0

    # Bleu takes the three camels; then the yellow die left on the Sac leaves the tower.
    assert act(spec, BLEU, SelectDice(floor="camels", action="floor")) == [
        DiceSelected(seat=BLEU, floor="camels", action="floor", dice=3, value=1),
        CamelsTaken(seat=BLEU, count=3),
        ActionEnded(seat=BLEU),
    ]
    assert spec.state.tower[1] == (0, 0, 0)
    act(spec, BLEU, EndTurn())

    # Vert takes three gold.
    assert act(spec, VERT, SelectDice(floor="gold", action="floor"))[1] == GoldTaken(seat=VERT, count=3)
    assert flow(spec.state).turn_seat == ROUGE  # Vert cannot build nor play a card: his turn ended


def test_the_tower_puts_the_highest_group_on_gold_even_over_empty_floors():
    assert build_tower((1, 1, 3, 3, 5, 5, 6, 6, 6), (1, 2)) == (
        (1, 2, 1), (2, 0, 1), (3, 2, 0), (5, 2, 0), (0, 0, 0), (6, 3, 0),
    )  # fmt: skip
    assert build_tower((2, 5, 2, 5), ()) == ((2, 2, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), (5, 2, 0))
    assert build_tower((4, 4, 4), (4,)) == ((4, 3, 1),) + ((0, 0, 0),) * 5


def rouge_to_play() -> Spec:
    spec = the_example_table().given([roll(BLEU, 1, 1, 3, 3, 5, 5, 6, 6, 6, yellow=(1, 2))])
    act(spec, BLEU, SelectDice(floor="camels", action="floor"))
    act(spec, BLEU, EndTurn())
    act(spec, VERT, SelectDice(floor="gold", action="floor"))
    return spec


def test_the_placement_example_rouge_finishes_the_blue_souk_then_starts_the_pink_one():
    spec = rouge_to_play()
    assert act(spec, ROUGE, SelectDice(floor="chest", action="floor")) == [
        DiceSelected(seat=ROUGE, floor="chest", action="floor", dice=2, value=5),
        PlacementBegan(seat=ROUGE, quarter="chest", cubes=2),
    ]
    # Rouge started the blue souk: he must finish it first (B).
    assert legal_commands(spec.state, ROUGE) == [PlaceCube(shop="CHEST-2.2")]
    assert spec.when(ROUGE, PlaceCube(shop="CHEST-4.1")).then_error("finish_your_souk") is None
    assert spec.when(ROUGE, PlaceCube(shop="CHEST-3.3")).then_error("souk_taken") is None
    act(spec, ROUGE, PlaceCube(shop="CHEST-2.2"))
    # Then A is Bleu's souk; the four pink shops are open.
    assert legal_commands(spec.state, ROUGE) == [PlaceCube(shop=f"CHEST-4.{k}") for k in range(1, 5)]
    assert spec.when(ROUGE, PlaceCube(shop="CHEST-3.3")).then_error("souk_taken") is None
    assert act(spec, ROUGE, PlaceCube(shop="CHEST-4.1")) == [
        CubePlaced(seat=ROUGE, shop="CHEST-4.1"),
        ActionEnded(seat=ROUGE),
        TurnEnded(seat=ROUGE),  # no card, nothing to build: the turn ends
    ]
    # Now the pink souk is closed to the others.
    assert complete_souks(spec.state) == (SoukCompleted(souk="CHEST-2", seat=ROUGE, points=4),)


def test_the_supervisor_example_jaune_pays_one_gold_to_ship_only_his_cube():
    spec = rouge_to_play()
    act(spec, ROUGE, SelectDice(floor="chest", action="floor"))
    act(spec, ROUGE, PlaceCube(shop="CHEST-2.2"))
    act(spec, ROUGE, PlaceCube(shop="CHEST-4.1"))
    # Only the "3" group is left: Jaune could fill 2 Tonneau shops, draw a card, or move the supervisor.
    assert [c for c in legal_commands(spec.state, JAUNE) if isinstance(c, SelectDice)] == [
        SelectDice(floor="barrel", action="floor"),
        SelectDice(floor="barrel", action="supervisor"),
        SelectDice(floor="barrel", action="card"),
    ]
    act(spec, JAUNE, SelectDice(floor="barrel", action="supervisor"))
    reachable = {c.square for c in legal_commands(spec.state, JAUNE)}
    assert {"E1", "S1"} <= reachable and "S2" in reachable  # the squares A, 3 away; B, 4 away, for 1 gold
    # S1 would ship Bleu's and Jaune's cubes (in Jaune's order), E1 Bleu's; one gold more reaches B (S2).
    events = act(spec, JAUNE, MoveSupervisor(square="S2"))
    assert events == [SupervisorMoved(seat=JAUNE, square="S2", gold=1)]
    assert flow(spec.state).awaiting == (JAUNE,)  # he has a camel: he may keep his cube
    # He lets it go: it takes the caravan's first camel and scores 2 at once.
    assert act(spec, JAUNE, LetCubeGo()) == [
        CubeShipped(seat=JAUNE, shop="BAG-3.3", camel=False, points=2),
        ActionEnded(seat=JAUNE),
    ]
    assert spec.state.players[JAUNE].score == 2
    assert spec.state.caravan == (JAUNE,)


def test_the_caravanserai_built_as_third_building_scores_five():
    spec = rouge_to_play()
    act(spec, ROUGE, SelectDice(floor="chest", action="floor"))
    act(spec, ROUGE, PlaceCube(shop="CHEST-2.2"))
    act(spec, ROUGE, PlaceCube(shop="CHEST-4.1"))
    act(spec, JAUNE, SelectDice(floor="barrel", action="supervisor"))
    act(spec, JAUNE, MoveSupervisor(square="S2"))
    act(spec, JAUNE, LetCubeGo())
    before = spec.state.players[JAUNE]
    assert act(spec, JAUNE, Build(building="caravanserai"))[0] == BuildingBuilt(
        seat=JAUNE, building="caravanserai", camels=3, gold=3, points=5
    )
    after = spec.state.players[JAUNE]
    assert after.score == before.score + 5 == 7
    assert (after.camels, after.gold) == (before.camels - 3, before.gold - 3)
    assert after.buildings == ("pen", "bazaar", "caravanserai")


def week_end_spec(*history) -> Spec:
    """The last turn of week 1 (day 7), Jaune to end it."""
    return Spec(GAME, 4).given(
        opening(4)[:1]
        + list(history)
        + [new_day(4, first=BLEU, day=7), roll(BLEU, 1, 1, 2, 2, 3, 3, 4, 4, 5)]
        + [TurnEnded(seat=s) for s in (BLEU, VERT, ROUGE)]
        + [ActionEnded(seat=JAUNE)]
    )


def test_the_chest_quarter_scoring_bleu_6_rouge_4():
    spec = week_end_spec(
        *cubes(BLEU, "CHEST-3.1", "CHEST-3.2", "CHEST-3.3"),
        *cubes(ROUGE, "CHEST-2.1", "CHEST-2.2", "CHEST-4.1", "CHEST-4.2"),
    )
    events = spec.decide(JAUNE, EndTurn())
    assert events[1] == SouksScored(
        completed=(
            SoukCompleted(souk="CHEST-2", seat=ROUGE, points=4),
            SoukCompleted(souk="CHEST-3", seat=BLEU, points=6),
        ),
        points=(6, 0, 4, 0),
    )
    after = spec.given(events).state
    assert after.shops == (-1,) * 47  # the quarters are emptied, the cubes back in reserve
    assert after.players[ROUGE].reserve == 24 and after.players[BLEU].reserve == 24


def test_the_chest_quarter_scoring_with_the_bazaar_bleu_8_rouge_6():
    spec = week_end_spec(
        *built(BLEU, "bazaar"),
        *built(ROUGE, "bazaar"),
        *cubes(BLEU, "CHEST-3.1", "CHEST-3.2", "CHEST-3.3"),
        *cubes(ROUGE, "CHEST-2.1", "CHEST-2.2", "CHEST-4.1", "CHEST-4.2"),
    )
    assert spec.decide(JAUNE, EndTurn())[1].points == (8, 0, 6, 0)


def test_the_caravan_scoring_vert_4_jaune_12_bleu_4_rouge_2():
    # bottom row: Jaune Vert Bleu Jaune; middle: Vert Jaune Bleu Rouge; top: Jaune.
    spec = week_end_spec(*caravan(JAUNE, VERT, BLEU, JAUNE, VERT, JAUNE, BLEU, ROUGE, JAUNE))
    assert caravan_points(spec.state) == (4, 4, 2, 12)
    events = spec.decide(JAUNE, EndTurn())
    assert events[2] == CaravanScored(points=(4, 4, 2, 12), emptied=False)
    after = spec.given(events).state
    assert len(after.caravan) == 9  # the caravan is not emptied
    assert after.supervisor == 0  # back on the centre
    assert (after.week, after.day, after.order) == (2, 1, (VERT, ROUGE, JAUNE, BLEU))
