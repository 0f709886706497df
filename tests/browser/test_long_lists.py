"""Long lists of moves made findable (issue #20; clients/web/src/boards/choices.ts), in Chromium: Istanbul's answers
to a card (139 legal commands at this seeded position) and 1001 Karawane's equipment (84) drawn by their boards
alone from a seat's view built by the rules (no game over HTTP): every command is still a visible button at once
(the board contract), in groups a person may fold, with an index of the groups and their counts, a search and
filters that narrow what shows and are kept while the board is drawn again for the same decision; at a phone's
width nothing runs off the screen."""

from __future__ import annotations

import random

import msgspec

from domain.chance import Chance
from tests.bots.support import started
from tests.browser.conftest import PHONE
from tests.browser.shell import board_buttons, render_board


def table_at(name: str, seats: int, seed: int, commands: int, seat: int) -> dict:
    """What the board gets for ``seat`` after ``commands`` random commands of a seeded game (its view and legal
    commands as the server would serve them)."""
    game, state = started(name, seats, seed)
    rng = random.Random(seed)
    for n in range(commands):
        mover = rng.choice(game.flow(state).awaiting)
        command = rng.choice(list(game.legal_commands(state, mover)))
        for event in game.decide(state, mover, command, Chance(seed.to_bytes(8, "big"), n + 1)):
            state = game.evolve(state, event)
    assert seat in game.flow(state).awaiting
    return {"game_id": "g", "game": name, "version": commands + 5, "status": "playing", "seat": seat,
            "legal": msgspec.to_builtins(list(game.legal_commands(state, seat))),
            "view": msgspec.to_builtins(game.view(state, seat)), "result": None}


def visible_buttons(page) -> list[int]:
    return page.eval_on_selector_all("#app [data-legal]", "els => els.filter(e => e.checkVisibility())"
                                     ".map(e => Number(e.dataset.legal))")


def chips(page, key: str) -> list[str]:
    return page.eval_on_selector_all(f"#{key}-index .choice-chip", "els => els.filter(e => !e.hidden)"
                                     ".map(e => e.textContent)")


def test_istanbuls_answers_to_a_card_are_grouped_by_place_with_an_index_a_search_and_a_filter(open_page):
    table = table_at("istanbul", 2, 1, 62, 0)
    total = len(table["legal"])
    acts = [i for i, c in enumerate(table["legal"]) if c["type"] == "istanbul.Act"]
    assert total > 120 and len(acts) > 100
    page = open_page("/")
    render_board(page, "istanbul", table, ["Ali", "Bea"])
    assert sorted(board_buttons(page)) == list(range(total))
    assert sorted(visible_buttons(page)) == list(range(total))  # every command at once, nothing folded yet

    groups = page.locator("#app .ist-answers details.choice-group")
    index = chips(page, "ist-answers")
    assert groups.count() == len(index) > 1
    assert sum(int(c.rsplit("·", 1)[1]) for c in index) == len(acts)  # the index counts every answer
    assert page.text_content("#ist-answers-count") == f"{len(acts)} moves"

    # a search narrows the answers to the ones naming the word (one some answers name: a good, a card...);
    # "Show all" brings them back
    labels = {i: table_label(page, i).lower() for i in acts}
    word = next(w for w in ("fabric", "spice", "fruit", "blue", "lira", "upgrade", "fill", "discard", "pay")
                if 0 < sum(w in label for label in labels.values()) < len(acts) / 2)
    page.fill("#ist-answers-find", word)
    shown = [i for i in visible_buttons(page) if i in acts]
    assert sorted(shown) == sorted(i for i, label in labels.items() if word in label), word
    assert page.text_content("#ist-answers-count") == f"{len(shown)} of {len(acts)} moves"
    page.click(f"#app [data-legal='{shown[0]}']")
    assert page.evaluate("window.played") == [shown[0]]

    # drawn again for the same decision (a push: another seat answered), the search holds; a fold too
    render_board(page, "istanbul", table, ["Ali", "Bea"])
    assert page.input_value("#ist-answers-find") == word and len(visible_buttons(page)) < total
    page.click("#ist-answers-clear")
    assert sorted(visible_buttons(page)) == list(range(total))
    first = groups.first
    folded = first.get_attribute("data-group")
    inside = first.locator("[data-legal]").evaluate_all("els => els.map(e => Number(e.dataset.legal))")
    first.locator("summary").click()
    assert not set(inside) & set(visible_buttons(page))
    render_board(page, "istanbul", table, ["Ali", "Bea"])
    assert page.get_attribute(f"#app details[data-group='{folded}']", "open") is None
    page.click(f"#app [data-group-chip='{folded}']")  # the index opens it again, its first answer focused
    assert set(inside) <= set(visible_buttons(page))
    assert page.evaluate("Number(document.activeElement.dataset.legal)") == inside[0]


def table_label(page, index: int) -> str:
    return page.get_attribute(f"#app [data-legal='{index}']", "aria-label")


def test_karawanes_84_ways_to_equip_are_grouped_by_camel_drivers_and_filtered_by_kind_at_a_phones_width(open_page):
    table = table_at("karawane", 2, 0, 0, 1)
    equips = [i for i, c in enumerate(table["legal"]) if c["type"] == "karawane.Equip"]
    assert len(equips) == 84
    page = open_page("/", viewport=PHONE)
    render_board(page, "karawane", table, ["Ali", "Bea"])
    assert sorted(visible_buttons(page)) == list(range(len(table["legal"])))
    assert chips(page, "kar-equip") == [f"{h} · {(7 - d) * (8 - d) // 2}" for d, h in enumerate(
        ["no camel driver"] + [f"{d} camel driver{'s' if d > 1 else ''}" for d in range(1, 7)])]

    # 2 water skins and 2 goods cards: one button for 0, 1 and 2 camel drivers
    page.select_option("#kar-equip-facet-skins", "2")
    page.select_option("#kar-equip-facet-goods", "2")
    shown = [i for i in visible_buttons(page) if i in equips]
    assert sorted((table["legal"][i]["camel_drivers"], table["legal"][i]["water_skins"], table["legal"][i]["goods"])
                  for i in shown) == [(0, 2, 2), (1, 2, 2), (2, 2, 2)]
    assert chips(page, "kar-equip") == ["no camel driver · 1", "1 camel driver · 1", "2 camel drivers · 1"]
    page.click(f"#app [data-legal='{shown[-1]}']")
    assert page.evaluate("window.played") == [shown[-1]]

    # another decision (another seat's equipment, other commands): the filters start afresh
    other = dict(table, legal=table["legal"][:-1])
    render_board(page, "karawane", other, ["Ali", "Bea"])
    assert page.input_value("#kar-equip-facet-skins") == ""
    assert len([i for i in visible_buttons(page) if i in equips]) == 83

    # at a phone's width: nothing wider than the screen, and every button big enough for a finger
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    small = page.eval_on_selector_all("#app .kar-equip [data-legal], #app .choice-chip",
                                      "els => els.filter(e => e.getBoundingClientRect().height < 28).length")
    assert small == 0
