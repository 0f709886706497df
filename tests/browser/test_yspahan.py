"""Yspahan's board (clients/web/src/boards/yspahan.ts) in Chromium, drawn from real views of a real `souk serve`.

The board alone: each seat's page imports the built board and renders the seat's view (fetched over HTTP) into a
container; a click on one of its ``[data-legal]`` buttons must call ``play`` with that button's index, and the test
sends that command for the seat over HTTP. Two seats play a whole game this way (random clicks end it: the game
lasts three weeks whatever is played; a 2-player game is about 150 commands), each page checked at every step: one
button per legal command, its own cards face up inside ``data-secret``, the other seat's only as a count; a
spectator's page follows with no buttons and no secret.

SOUK_SCREENSHOTS=1 writes docs/screenshots/yspahan-desktop.png and yspahan-phone.png from the middle of the game.
"""

from __future__ import annotations

import os
import random
import secrets
from collections import Counter
from pathlib import Path

import httpx

from domain.yspahan import board, data
from tests.browser.conftest import DESKTOP, PHONE

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

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
        self.tokens: list[str] = []
        self.names = [f"Player {n}" for n in range(1, seats + 1)]
        for seat, name in enumerate(self.names):
            joined = self.http.post(f"/games/{self.game_id}/seats", json={
                "name": name, "seat": seat, "request_id": secrets.token_hex(8), "entropy": secrets.token_hex(32)})
            assert joined.status_code in (200, 201), joined.text
            self.tokens.append(joined.json()["token"])

    def view(self, seat: int | None) -> dict:
        if seat is None:
            response = self.http.get(f"/games/{self.game_id}/view")
        else:
            response = self.http.get(f"/games/{self.game_id}/seats/{seat}/view",
                                     headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert response.status_code == 200, response.text
        return response.json()

    def send(self, seat: int, command: dict, version: int) -> None:
        response = self.http.post(f"/games/{self.game_id}/seats/{seat}/commands",
                                  headers={"Authorization": f"Bearer {self.tokens[seat]}"},
                                  json={"command_id": secrets.token_hex(16), "command": command,
                                        "expected_version": version})
        assert response.status_code in (200, 202), response.text


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
    gets a click on one of its legal buttons, chosen at random, until the game ends."""
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
        page.screenshot(path=str(SCREENSHOTS / f"yspahan-{name}.png"), full_page=True)
