"""1001 Karawane's board (clients/web/src/boards/karawane.ts) in a real browser, on views a real `souk serve` sends.

The whole client: browser contexts (each its own localStorage, as different people's browsers) join the seats of
one game through the page and play it to the end by clicking the board's ``[data-legal]`` buttons, each page
checked against its own seat's view and against what the other seats hold; a reload in the middle rejoins with
the stored token and catches up; a spectator's page follows without buttons or secrets.

The board alone: a game is created and its seats joined over HTTP; the page imports the board's module and draws
each seat's view (and the spectator's) through ``board.render``, as the shell does. The tests check the board
contract (every legal command one ``button[data-legal]`` with a label in the game's words, clicking it plays that
index, this seat's secrets only inside ``data-secret``, a spectator has no buttons) while the game is played over
HTTP to its end. Random play seldom ends a game of Karawane (a caravan must bring home all three artifacts), so
each seat's command is the artifact seeker's (services/bots ``seeker``), chosen from that seat's view alone.
"""

from __future__ import annotations

import json
import os
import random

import httpx
import msgspec

from contracts.karawane import Options
from services.bots.strategies import SeekerStrategy
from services.client.remote_bot import _decided
from services.client.sdk import _typed_view, _view
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.shell import WHOLE_GAMES, GameOverHttp, render_board, screenshot
from tests.browser.shell import board_buttons as buttons
from tests.browser.shell import board_secret_text as secret_text


# Commands clicked through the pages before the rest of the game is played over HTTP (the pages follow it to the
# end): the seekers' games last about 700 commands, too long for a click each on a loaded machine. 0: click all
# (as SOUK_BROWSER_GAMES=whole does; CI's short form clicks 100, where the reload and the screenshots fall).
CLICKS = int(os.environ.get("SOUK_KARAWANE_CLICKS", "0" if WHOLE_GAMES else "100"))
CHECK_EVERY = 4 if WHOLE_GAMES else 8  # the board test's seat drawn and checked every CHECK_EVERY commands

# The game's seed (with ``unfair``, and no seat giving entropy) and the seeker's random choices are fixed, so the
# game is the same at every run: one the seekers end in 444 commands, 53 rounds (seeds 1 to 6 took more than 280;
# a random desert's game lasts about 700 commands on average, and some thousands).
SEED = f"{7:064x}"
CHOICES = 7  # the seed of the seeker's random choices

KINDS = ("desert", "city", "oasis", "caravanserai", "tower", "mausoleum", "ruins")


class Game(GameOverHttp):
    """A Karawane game over HTTP: its seats' tokens, their views, the seeker's command for a seat."""

    def __init__(self, url: str, names: list[str], game_id: str | None = None) -> None:
        """A new game with its seats joined over HTTP; with ``game_id``, an existing one (``tokens`` set later)."""
        super().__init__(url, names)
        self.seeker = SeekerStrategy()
        if game_id is not None:
            self.id = game_id
            return
        self.create({"game": "karawane", "title": "1001 Karawane", "seats": len(names), "seed": SEED, "unfair": True})
        for name in names:
            self.join(name, "")

    def pick(self, table: dict, rng: random.Random) -> int:
        """The index in ``table["legal"]`` of the seeker's command for the seat, from its view alone (as ``souk bot``
        decides: a random legal command where the state built from the view offers one the seat may not send)."""
        typed = _typed_view(_view.decode(msgspec.json.encode(table)))
        command = _decided(typed, self.seeker, Options(), rng)
        return list(typed.legal).index(command)


def render(page, table: dict, names: list[str]) -> None:
    assert render_board(page, "karawane", table, names) == "1001 Karawane"


def check_seat(page, game: Game, table: dict, pick: int | None = None) -> None:
    """The contract on one seat's view: one button per legal command, labelled in words, and clicking one plays
    its index; the hand and the hexes only this seat looked at are inside data-secret, nowhere else."""
    render(page, table, game.names)
    legal = table["legal"]
    shown = buttons(page)
    assert sorted(shown) == list(range(len(legal))), (shown, legal)
    labels = page.eval_on_selector_all("#app [data-legal]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert all(label and "{" not in label and "undefined" not in label for label in labels), labels
    if legal:
        pick = random.Random(table["version"]).randrange(len(legal)) if pick is None else pick
        page.click(f"#app [data-legal='{pick}']")
        assert page.evaluate("window.played") == [pick]
    view = table["view"]
    you = view["you"]
    for card, count in (("camel", you["camel_drivers"]), ("skin", you["water_skins"]), ("goods", you["goods"]),
                        ("gold", you["gold"])):
        assert page.get_attribute(f"#app [data-secret] [data-card='{card}']", "data-count") == str(count)
    assert page.locator("#app [data-card]").count() == page.locator("#app [data-secret] [data-card]").count()
    looked = {h["cell"]: h["kind"] for h in view["hexes"] if h["kind"] and not h["face_up"]}
    drawn = dict(page.eval_on_selector_all(
        "#app [data-secret][data-kind]", "els => els.map(e => [Number(e.closest('[data-cell]').dataset.cell), e.dataset.kind])"))
    assert drawn == looked
    face_up = {h["cell"]: h["kind"] for h in view["hexes"] if h["face_up"]}
    public = dict(page.eval_on_selector_all(
        "#app .kar-hex[data-kind]", "els => els.map(e => [Number(e.dataset.cell), e.dataset.kind])"))
    assert public == face_up


def check_spectator(page, game: Game, table: dict) -> None:
    """A spectator's board: no buttons, no secrets, no kind but the face-up hexes', every caravan where it is."""
    render(page, table, game.names)
    assert buttons(page) == [] and secret_text(page) == ""
    kinds = page.eval_on_selector_all("#app [data-kind]", "els => els.map(e => Number(e.closest('[data-cell]').dataset.cell))")
    assert sorted(kinds) == sorted(h["cell"] for h in table["view"]["hexes"] if h["face_up"])
    for p in table["view"]["players"]:
        if p["cell"] is not None:
            assert page.locator(f"#app .kar-hex[data-cell='{p['cell']}'] [data-caravan='{p['seat']}']").count() == 1


def test_the_board_draws_every_seat_and_offers_exactly_the_legal_commands_to_the_end(open_page, souk_url):
    """Two seats on the seeded desert (``SEED``: 444 commands), each playing the seeker's command over HTTP; the
    awaited seat's view is drawn and checked every ``CHECK_EVERY`` command (4th with SOUK_BROWSER_GAMES=whole, 8th in
    CI's short form) and at each stage's first five views (the button clicked is the one sent), the
    spectator's every 20th; the final board shows the scores and no buttons."""
    game = Game(souk_url, ["Ayla", "Baran"])
    page = open_page("/", DESKTOP)
    rng = random.Random(CHOICES)
    try:
        (seat,) = game.view(None)["flow"]["awaiting"]
        table = game.view(seat)
        phases: dict[str, int] = {}
        while table["status"] == "playing":
            version, phase = table["version"], table["view"]["phase"]
            pick = game.pick(table, rng)
            phases[phase] = phases.get(phase, 0) + 1
            if game.commands % CHECK_EVERY == 0 or phases[phase] <= 5:
                check_seat(page, game, table, pick)
            if game.commands % 20 == 0:
                check_spectator(page, game, game.view(None, version))
            after = game.view(seat, game.send(seat, table["legal"][pick], version))
            if after["status"] == "playing" and after["flow"]["awaiting"] != [seat]:
                (seat,) = after["flow"]["awaiting"]
                after = game.view(seat, after["version"])
            table = after
        assert {"equip", "move", "moving", "desert", "home"} <= set(phases), phases
        end = game.view(None)
        render(page, end, game.names)
        assert page.locator("#app .kar-final li").count() == 2
        assert page.locator("#app .kar-final .kar-winner").count() == len(end["view"]["winners"]) >= 1
        for seat in range(2):
            final = game.view(seat)
            assert final["legal"] == []
            render(page, final, game.names)
            assert buttons(page) == []
    finally:
        game.close()


# --- the whole client: the table page of webshell around the board ---------------------------------------

def wait_version(page, version: int, timeout: float = 15_000) -> None:
    page.wait_for_function("v => Number(document.querySelector('#table')?.dataset.version) >= v", arg=version,
                           timeout=timeout)


def join_through_the_page(page, game_id: str, seat: int, name: str) -> str:
    """Takes ``seat`` with the page's join form; the token the page keeps (localStorage ``souk.seats``). The join
    the page sends gives no entropy (its random share is taken out), so that the seeded game is the same game."""
    def no_entropy(route) -> None:
        if route.request.method != "POST":
            return route.continue_()
        body = json.loads(route.request.post_data or "{}")
        body["entropy"] = ""
        return route.continue_(post_data=json.dumps(body))

    page.route("**/games/*/seats", no_entropy)
    page.fill("input[name=player-name]", name)
    page.click(f"button[data-join-seat='{seat}']")
    page.wait_for_selector(f"#table[data-seat='{seat}']")
    held = page.evaluate("id => JSON.parse(localStorage.getItem('souk.seats'))[id]", game_id)
    assert held["seat"] == seat and held["name"] == name
    return held["token"]


def page_secrets(page) -> dict:
    """What a page shows as its seat's secrets: the hand's counts, the hexes whose kinds only it knows."""
    return page.evaluate("""() => ({
      hand: Object.fromEntries([...document.querySelectorAll('#board [data-secret] [data-card][data-count]')]
        .map((e) => [e.dataset.card, Number(e.dataset.count)])),
      cards: document.querySelectorAll('#board [data-card]').length,
      secretCards: document.querySelectorAll('#board [data-secret] [data-card]').length,
      kinds: Object.fromEntries([...document.querySelectorAll('#board [data-kind]')]
        .map((e) => [e.closest('[data-cell]').dataset.cell, e.dataset.kind])),
    })""")


def check_secrets(page, seat: int, views: list[dict]) -> None:
    """The page of ``seat`` shows its own hand and the hexes it looked at, and nothing of what the other seats
    alone know (their hands' contents, the hexes they looked at and ``seat`` did not)."""
    mine = views[seat]["view"]
    shown = page_secrets(page)
    you = mine["you"]
    assert shown["hand"] == {"camel": you["camel_drivers"], "skin": you["water_skins"], "goods": you["goods"],
                             "gold": you["gold"]}, (shown["hand"], you)
    assert shown["cards"] == shown["secretCards"]
    known = {h["cell"]: h["kind"] for h in mine["hexes"] if h["kind"]}
    assert {int(c): k for c, k in shown["kinds"].items()} == known
    for other, table in enumerate(views):
        if other == seat:
            continue
        theirs = {h["cell"] for h in table["view"]["hexes"] if h["kind"] and not h["face_up"]}
        assert not (theirs - set(known)) & {int(c) for c in shown["kinds"]}


def test_two_browsers_play_a_game_to_its_end_through_the_page_with_a_reload_and_a_spectator(open_page, souk_url):
    """Two seats (the fewest: Karawane has no options that shorten it) on the seeded desert (``SEED``: 444
    commands), each in its own browser context joined through the page; the awaited seat's page clicks the
    seeker's command, chosen from that seat's view alone, for the first ``CLICKS`` commands (150; every command
    with SOUK_KARAWANE_CLICKS=0), the rest of the game is sent over HTTP while the pages follow it. Every 25 commands both pages' secrets are compared with
    the seats' views and the spectator's page is checked (no buttons, no secrets, caught up); the non-awaited
    seat's page is reloaded once mid-game and must rejoin (its token from localStorage) and catch up with the
    commands played meanwhile; at the end every page shows the result. Screenshots of the board at desktop and
    phone width are taken from the table pages."""
    names = ["Ayla", "Baran"]
    created = httpx.post(souk_url + "/games", json={"game": "karawane", "title": "Across the desert", "seats": 2,
                                                    "seed": SEED, "unfair": True})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    game = Game(souk_url, names, game_id)
    spectator = open_page(f"/#/games/{game_id}", DESKTOP)
    pages = [open_page(f"/#/games/{game_id}", DESKTOP if seat == 0 else PHONE) for seat in range(2)]
    game.tokens = [join_through_the_page(page, game_id, seat, names[seat]) for seat, page in enumerate(pages)]
    rng = random.Random(CHOICES)
    try:
        public = game.view(None)
        (seat,) = public["flow"]["awaiting"]
        table = game.view(seat, public["version"])
        played, reloaded, caught_up, shots = 0, None, False, set()
        while table["status"] == "playing":
            version, page = table["version"], pages[seat]
            clicking = not CLICKS or played < CLICKS
            if clicking:
                wait_version(page, version)
            if clicking and played % 25 == 0:
                assert page.get_attribute("#table", "data-seat") == str(seat)
                shown = page.eval_on_selector_all("#board [data-legal]", "els => els.map(e => Number(e.dataset.legal))")
                assert sorted(shown) == list(range(len(table["legal"])))
                views = [table if s == seat else game.view(s, version) for s in range(2)]
                for s in range(2):
                    wait_version(pages[s], version)
                    check_secrets(pages[s], s, views)
                wait_version(spectator, version)
                assert spectator.get_attribute("#table", "data-seat") == "spectator"
                assert spectator.locator("#board [data-legal]").count() == 0
                assert spectator.locator("#board [data-secret]").count() == 0
            if reloaded is None and played >= 60 and table["view"]["phase"] in ("equip", "move"):
                reloaded = (1 - seat, version)  # the other seat's browser reloads while this seat plays on
                pages[1 - seat].reload()
            shot = f"karawane-{'desktop' if seat == 0 else 'phone'}.png"  # seat 0's page is a desktop's
            if (clicking and shot not in shots and table["view"]["phase"] == "move" and table["view"]["round"] >= 3
                    and any(h["kind"] and not h["face_up"] for h in table["view"]["hexes"])):
                shoot_board(page, shot)
                shots.add(shot)
            if CLICKS and played >= CLICKS:
                game.send(seat, table["legal"][game.pick(table, rng)], version)
            else:
                page.click(f"#board [data-legal='{game.pick(table, rng)}']")
                wait_version(page, version + 1)
            played += 1
            if reloaded and not caught_up:
                other, at = reloaded  # played on since the reload: the reloaded page rejoined and caught up
                pages[other].wait_for_selector(f"#table[data-seat='{other}']")
                wait_version(pages[other], version + 1, timeout=60_000)
                caught_up = version + 1 > at
            after = game.view(seat, version + 1)
            awaited = after["flow"]["awaiting"]
            if after["status"] == "playing" and awaited != [seat]:
                (seat,) = awaited
                after = game.view(seat, after["version"])
            table = after
        final = game.view(None)
        assert final["status"] == "over" and final["result"]["winners"]
        for page in (*pages, spectator):
            wait_version(page, final["version"], timeout=60_000)
            page.wait_for_selector("#result")
            assert page.locator("#board [data-legal]").count() == 0
            assert page.locator("#board .kar-final li").count() == 2
        assert reloaded and caught_up and shots == {"karawane-desktop.png", "karawane-phone.png"}
    finally:
        game.close()


def shoot_board(page, name: str) -> None:
    screenshot(page.locator("#board"), name)
