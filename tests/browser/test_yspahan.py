"""Yspahan's board (clients/web/src/boards/yspahan.ts) in Chromium, drawn from real views of a real `souk serve`.

Through the page (the shell's table page, `#/games/{id}`): two browsers join the seats of one game with the join
buttons and play it to its end by clicking the board's legal buttons, a reload in the middle rejoins and catches
up, a spectator follows. The board alone: each seat's page imports the built board and renders the seat's view (fetched over HTTP) into a
container; a click on one of its ``[data-legal]`` buttons must call ``play`` with that button's index, and the test
sends that command for the seat over HTTP. Two seats play a whole game this way (random clicks end it: the game
lasts three weeks whatever is played; a 2-player game is about 150 commands), each page checked at every step: one
button per legal command, its own cards face up inside ``data-secret``, the other seat's only as a count; a
spectator's page follows with no buttons and no secret.

SOUK_SCREENSHOTS=1 writes docs/screenshots/yspahan-desktop.png and yspahan-phone.png (the table page in the middle
of the game) and yspahan-board-*.png (the board alone).
"""

from __future__ import annotations

import os
import random
import secrets
import time
from collections import Counter
from pathlib import Path

import httpx

from domain.yspahan import board, data
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.shell import WHOLE_GAMES, finish_over_http

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CLICKED = 80  # commands clicked in the whole games' short form (a 2-seat game is about 150)

RENDER = """async ({table, names}) => {
  const { board } = await import("/app/js/web/src/boards/yspahan.js");
  let root = document.getElementById("board-under-test");
  if (!root) {
    root = document.createElement("div");
    root.id = "board-under-test";
    document.body.replaceChildren(root);
  }
  root.replaceChildren();
  window.played = [];
  board.render(root, { table, names, play: (index) => window.played.push(index) });
  return board.title;
}"""

# What the page shows: the legal buttons' indices, the cards face up inside and outside data-secret, the other
# seats' card counts, and whether the page is wider than its window.
INSPECT = """() => {
  const root = document.getElementById("board-under-test");
  const cards = (sel) => [...root.querySelectorAll(sel)].map((n) => n.dataset.card);
  return {
    legal: [...root.querySelectorAll("button[data-legal]")].map((b) => Number(b.dataset.legal)),
    unlabelled: [...root.querySelectorAll("button[data-legal]")].filter((b) => !(b.textContent.trim() || b.getAttribute("aria-label"))).length,
    secret: cards("[data-secret] [data-card]"),
    open: [...root.querySelectorAll("[data-card]")].filter((n) => !n.closest("[data-secret]")).map((n) => n.dataset.card),
    secrets: root.querySelectorAll("[data-secret]").length,
    counts: Object.fromEntries([...root.querySelectorAll("[data-player]")].map((p) => [p.dataset.player,
      p.querySelector("[data-hand-size]") ? Number(p.querySelector("[data-hand-size]").dataset.handSize) : null])),
    cubes: root.querySelectorAll(".ysp-shop .ysp-cube").length,
    supervisor: root.querySelector(".ysp-here")?.dataset.square ?? null,
    overflow: document.documentElement.scrollWidth > window.innerWidth,
  };
}"""


class Table:
    """A game over HTTP: create, join, each seat's view, send a seat's command."""

    def __init__(self, url: str, seats: int) -> None:
        self.http = httpx.Client(base_url=url, timeout=10)
        created = self.http.post("/games", json={"game": "yspahan", "title": "yspahan board", "seats": seats,
                                                 "request_id": secrets.token_hex(8)})
        assert created.status_code == 201, created.text
        self.game_id = created.json()["game_id"]
        self.version = 0  # the newest version made through this object
        self.tokens: list[str] = []
        self.names = [f"Player {n}" for n in range(1, seats + 1)]
        for seat, name in enumerate(self.names):
            joined = self.http.post(f"/games/{self.game_id}/seats", json={
                "name": name, "seat": seat, "request_id": secrets.token_hex(8), "entropy": secrets.token_hex(32)})
            assert joined.status_code in (200, 201), joined.text
            self.tokens.append(joined.json()["token"])
            self.version = max(self.version, joined.json()["version"])
        for _ in range(50):  # the last join starts the game
            started = self.view(None)
            if started["status"] == "playing":
                self.version = started["version"]
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the game did not start: {started['status']}")

    def view(self, seat: int | None) -> dict:
        """The view at the newest version this table has made (views are projected after the command's answer:
        ``min_version`` waits for it rather than reading the one before)."""
        params = {"min_version": self.version}
        if seat is None:
            response = self.http.get(f"/games/{self.game_id}/view", params=params)
        else:
            response = self.http.get(f"/games/{self.game_id}/seats/{seat}/view", params=params,
                                     headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert response.status_code == 200, response.text
        view = response.json()
        assert view["version"] >= self.version, (view["version"], self.version)
        return view

    def send(self, seat: int, command: dict, version: int) -> None:
        response = self.http.post(f"/games/{self.game_id}/seats/{seat}/commands",
                                  headers={"Authorization": f"Bearer {self.tokens[seat]}"},
                                  json={"command_id": secrets.token_hex(16), "command": command,
                                        "expected_version": version})
        assert response.status_code in (200, 202), response.text
        self.version = max(self.version, response.json()["version"])


def render(page, table: dict, names: list[str]) -> dict:
    assert page.evaluate(RENDER, {"table": table, "names": names}) == "Yspahan"
    return page.evaluate(INSPECT)


def check_secrets(shown: dict, table: dict, others: dict[int, dict]) -> None:
    """The seat's own cards face up inside data-secret; no card face elsewhere; the others' hands as counts."""
    view = table["view"]
    assert shown["open"] == []
    if table["seat"] is None:
        assert shown["secrets"] == 0 and shown["secret"] == []
        assert all(shown["counts"][str(p["seat"])] == p["hand_size"] for p in view["players"])
        return
    assert Counter(shown["secret"]) == Counter(view["hand"])
    for seat, other in others.items():
        hand = other["view"]["hand"]
        assert shown["counts"][str(seat)] == len(hand)  # the count it holds, never its cards


def test_two_seats_play_a_whole_game_by_clicking_the_board(open_page, souk_url):
    """Two pages (desktop and phone) each draw their seat's board, a third the spectator's; the awaited seat's page
    gets a click on one of its legal buttons, chosen at random, until the game ends (CI's short form: the first
    ``CLICKED`` commands, the rest sent over HTTP, then the end drawn; ``SOUK_BROWSER_GAMES=whole``: every one)."""
    game = Table(souk_url, 2)
    pages = [open_page("/", DESKTOP), open_page("/", PHONE)]
    spectator = open_page("/", DESKTOP)
    rng = random.Random(20)
    moves, saw_cubes, saw_cards, shot = 0, False, False, False
    while True:
        tables = [game.view(seat) for seat in range(2)]
        if tables[0]["status"] == "over":
            break
        awaited = tables[0]["flow"]["awaiting"]
        assert len(awaited) == 1, tables[0]["flow"]
        seat = awaited[0]
        table = tables[seat]
        if not WHOLE_GAMES and moves >= CLICKED:  # CI's short form: the rest sent over HTTP, the end drawn below
            game.send(seat, table["legal"][rng.randrange(len(table["legal"]))], table["version"])
            moves += 1
            continue
        shown = render(pages[seat], table, game.names)
        assert sorted(shown["legal"]) == list(range(len(table["legal"]))), (shown["legal"], table["legal"])
        assert shown["unlabelled"] == 0
        check_secrets(shown, table, {s: t for s, t in enumerate(tables) if s != seat})
        assert shown["supervisor"] == table["view"]["supervisor"]
        assert shown["cubes"] == len(table["view"]["shops"])
        assert not shown["overflow"], "the board is wider than the window"
        saw_cubes |= shown["cubes"] > 0
        saw_cards |= bool(table["view"]["hand"])
        if moves % 10 == 0:  # the spectator follows: no button, no secret
            watched = render(spectator, game.view(None), game.names)
            assert watched["legal"] == [] and watched["secrets"] == 0
            check_secrets(watched, game.view(None), {})
        if (not shot and moves > 40 and shown["cubes"] >= 4 and table["view"]["phase"] == "action"
                and table["view"]["hand"] and os.environ.get("SOUK_SCREENSHOTS")):
            screenshots(open_page, game, seat)
            shot = True
        index = rng.randrange(len(table["legal"]))
        button = pages[seat].locator(f'#board-under-test button[data-legal="{index}"]')
        if moves % 7 == 3:  # by keyboard now and then: focus and Enter
            button.focus()
            pages[seat].keyboard.press("Enter")
        else:
            button.click()
        assert pages[seat].evaluate("window.played") == [index]
        game.send(seat, table["legal"][index], table["version"])
        moves += 1
        assert moves < 400, "the game did not end"
    final = game.view(None)
    assert final["result"] is not None and saw_cubes and saw_cards
    for seat in range(2):  # the end: no buttons left, the result in the board's words
        shown = render(pages[seat], game.view(seat), game.names)
        assert shown["legal"] == []
        assert "Game over" in pages[seat].text_content("#board-under-test")


def test_every_phase_fits_a_phone_and_offers_each_legal_command(open_page, souk_url):
    """A 3-seat game played over HTTP at random to its end; the first view of each phase for each seat (and of the
    end) is drawn at a phone's width and a desktop's: one button per legal command, nothing wider than the window
    (a button on a road square or a shop must not widen the city's grid)."""
    game = Table(souk_url, 3)
    phone, desktop = open_page("/", PHONE), open_page("/", DESKTOP)
    rng = random.Random(3)
    seen: set[tuple[str, int]] = set()
    while True:
        watched = game.view(None)
        if watched["status"] == "over":
            break
        (seat,) = watched["flow"]["awaiting"]
        table = game.view(seat)
        version = table["version"]
        assert version == watched["version"]
        if (table["view"]["phase"], seat) not in seen:
            seen.add((table["view"]["phase"], seat))
            for page in (phone, desktop):
                shown = render(page, table, game.names)
                assert sorted(shown["legal"]) == list(range(len(table["legal"]))), table["view"]["phase"]
                assert not shown["overflow"], (table["view"]["phase"], page.viewport_size)
        game.send(seat, rng.choice(table["legal"]), version)
    for page in (phone, desktop):
        shown = render(page, game.view(None), game.names)
        assert shown["legal"] == [] and not shown["overflow"]
    assert {phase for phase, _ in seen} >= {"supply", "action", "place_cubes", "move_supervisor", "end_of_turn"}


def test_two_copies_of_a_card_in_hand_are_two_cards_face_up(open_page, souk_url):
    """A seat's real view, its hand made two copies of one card and one of another (the deck holds two of each):
    three cards face up inside data-secret, as the hand has."""
    game = Table(souk_url, 2)
    table = game.view(0)
    table["view"]["hand"] = ["sell_gold", "sell_gold", "take_camels"]
    shown = render(open_page("/", PHONE), table, game.names)
    assert Counter(shown["secret"]) == Counter(table["view"]["hand"]) and shown["open"] == []


def test_the_city_puts_each_shop_beside_the_squares_it_faces(open_page, souk_url):
    """The drawn city keeps the board's geography: each shop touches the road squares that face it (DATA.md's
    table, from which the supervisor ships goods), at desktop and phone width, and no shop covers the road."""
    game = Table(souk_url, 3)
    for viewport in (DESKTOP, PHONE):
        page = open_page("/", viewport)
        render(page, game.view(None), game.names)
        boxes = page.evaluate("""() => {
          const box = (n) => { const r = n.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
          const all = (attr) => Object.fromEntries([...document.querySelectorAll(`[data-${attr}]`)]
            .map((n) => [n.dataset[attr], box(n)]));
          return { shops: all("shop"), squares: all("square") };
        }""")
        assert set(boxes["shops"]) == set(board.SHOPS) and set(boxes["squares"]) == set(data.SQUARES)
        for square, facing in data.FACING.items():
            for shop in facing:
                assert touching(boxes["shops"][shop], boxes["squares"][square]), (square, shop, viewport)
        for shop, box in boxes["shops"].items():
            assert not any(overlapping(box, other) for other in boxes["squares"].values()), shop


def touching(a: list[float], b: list[float], gap: float = 4) -> bool:
    """Two boxes side by side: at most ``gap`` pixels apart on one axis, overlapping on the other."""
    across = min(a[2], b[2]) - max(a[0], b[0])
    down = min(a[3], b[3]) - max(a[1], b[1])
    return (across > 0 and -gap <= down <= 0) or (down > 0 and -gap <= across <= 0)


def overlapping(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0 and min(a[3], b[3]) - max(a[1], b[1]) > 0


def screenshots(open_page, game: Table, seat: int) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = open_page("/", viewport)
        render(page, game.view(seat), game.names)
        page.screenshot(path=str(SCREENSHOTS / f"yspahan-board-{name}.png"), full_page=True)


# --- through the page ----------------------------------------------------------------------------------------

# What a game's page shows: its version and seat, the board's legal buttons, the cards face up in and out of
# data-secret, the other seats' card counts.
PAGE = """() => {
  const table = document.getElementById("table");
  const board = document.getElementById("board");
  if (!table || !board) return null;
  const cards = [...board.querySelectorAll("[data-card]")];
  return {
    version: Number(table.dataset.version), seat: table.dataset.seat, status: table.dataset.status ?? null,
    legal: [...board.querySelectorAll("button[data-legal]")].map((b) => Number(b.dataset.legal)),
    secret: cards.filter((n) => n.closest("[data-secret]")).map((n) => n.dataset.card),
    open: cards.filter((n) => !n.closest("[data-secret]")).map((n) => n.dataset.card),
    secrets: document.querySelectorAll("[data-secret]").length,
    counts: Object.fromEntries([...board.querySelectorAll("[data-player]")].map((p) => [p.dataset.player,
      p.querySelector("[data-hand-size]") ? Number(p.querySelector("[data-hand-size]").dataset.handSize) : null])),
    title: document.getElementById("board-title")?.textContent ?? "",
    overflow: document.documentElement.scrollWidth > window.innerWidth,
  };
}"""


def at_version(page, version: int, seat: str) -> dict:
    """The page's state once its table shows ``version`` (or newer) for ``seat``."""
    page.wait_for_function("([v, seat]) => { const t = document.getElementById('table');"
                           " return t && t.dataset.seat === seat && Number(t.dataset.version) >= v; }",
                           arg=[version, seat], timeout=15_000)
    return page.evaluate(PAGE)


def seat_view(http: httpx.Client, game_id: str, seat: int, token: str, version: int) -> dict:
    response = http.get(f"/games/{game_id}/seats/{seat}/view", params={"min_version": version},
                        headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


def test_two_browsers_join_and_play_a_whole_game_on_the_table_page(open_page, souk_url):
    """Kept short: 2 seats (the fewest; a game is 3 weeks of 7 days whatever is played, about 150 commands) and
    random clicks, which end it; about a minute on an idle machine. Each player's browser (one at desktop width, one
    at a phone's) joins through the page's join button, then plays by clicking its board's ``[data-legal]`` buttons;
    at every step the page shows exactly the seat's legal commands, its own cards face up inside ``data-secret`` and
    the other seat's as a count (compared with what that seat holds, read over HTTP). The phone's page is reloaded in
    the middle: it rejoins with its stored token and catches up. A spectator's page follows with no legal button and
    no secret, and shows the result at the end. CI's short form clicks the first ``CLICKED`` commands (the reload
    falls in them), then the seats finish the game over HTTP while the pages follow it to the end;
    ``SOUK_BROWSER_GAMES=whole`` clicks every command."""
    http = httpx.Client(base_url=souk_url, timeout=10)
    created = http.post("/games", json={"game": "yspahan", "title": "Yspahan in the browser", "seats": 2,
                                        "request_id": secrets.token_hex(8)})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    pages = [open_page(f"/#/games/{game_id}", DESKTOP), open_page(f"/#/games/{game_id}", PHONE)]
    for seat, (page, name) in enumerate(zip(pages, ("Amina", "Bahram"))):
        page.fill("input[name=player-name]", name)
        page.click(f'button[data-join-seat="{seat}"]')
        page.wait_for_function("(seat) => document.getElementById('table')?.dataset.seat === seat", arg=str(seat))
    tokens = [page.evaluate(f"JSON.parse(localStorage.getItem('souk.seats'))['{game_id}'].token") for page in pages]
    spectator = open_page(f"/#/games/{game_id}", DESKTOP)
    rng = random.Random(7)
    version, moves, reloaded, shot = 0, 0, False, set()
    while True:
        view = http.get(f"/games/{game_id}/view", params={"min_version": version}).json()
        version = view["version"]
        if view["status"] == "over":
            break
        if view["status"] != "playing":  # the last join starts the game: its setup follows
            continue
        if not WHOLE_GAMES and moves >= CLICKED and reloaded:  # CI's short form: the seats finish over HTTP
            view = finish_over_http(souk_url, game_id, tokens, rng)
            version = view["version"]
            break
        (seat,) = view["flow"]["awaiting"]
        views = {s: seat_view(http, game_id, s, tokens[s], version) for s in range(2)}
        mine = views[seat]
        shown = at_version(pages[seat], version, str(seat))
        assert shown["version"] == version and shown["title"] == "Yspahan"
        assert sorted(shown["legal"]) == list(range(len(mine["legal"]))), (shown["legal"], mine["legal"])
        assert shown["open"] == [] and shown["secrets"] == 1
        assert Counter(shown["secret"]) == Counter(mine["view"]["hand"])
        other = 1 - seat
        assert shown["counts"][str(other)] == len(views[other]["view"]["hand"])  # its count, never its cards
        assert not shown["overflow"], f"seat {seat}'s page is wider than its window"
        if moves % 25 == 0:  # the spectator follows: the same version, no button, no secret
            watched = at_version(spectator, version, "spectator")
            assert watched["legal"] == [] and watched["secrets"] == 0 and watched["secret"] == []
        if not reloaded and moves >= 70:
            pages[1].reload()  # the phone's page: rejoins with its stored token and catches up
            again = at_version(pages[1], version, "1")
            assert again["version"] == version
            assert Counter(again["secret"]) == Counter(views[1]["view"]["hand"])
            reloaded = True
            continue
        width = "desktop" if seat == 0 else "phone"
        if (width not in shot and moves > 30 and mine["view"]["phase"] == "action"
                and len(mine["view"]["shops"]) >= 3 and os.environ.get("SOUK_SCREENSHOTS")):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            path = str(SCREENSHOTS / f"yspahan-{width}.png")
            pages[seat].locator("#board").screenshot(path=path)  # the board as the table page holds it
            shot.add(width)
        index = rng.randrange(len(mine["legal"]))
        pages[seat].click(f'#board button[data-legal="{index}"]')
        pages[seat].wait_for_function("(v) => Number(document.getElementById('table').dataset.version) > v",
                                      arg=version, timeout=15_000)
        moves += 1
        assert moves < 400, "the game did not end"
    assert reloaded and view["result"] is not None
    for seat, page in enumerate(pages):
        final = at_version(page, version, str(seat))
        assert final["legal"] == [] and "Game over" in page.text_content("#board")
    watched = at_version(spectator, version, "spectator")
    assert watched["legal"] == [] and watched["secrets"] == 0
    spectator.wait_for_selector("#result")
