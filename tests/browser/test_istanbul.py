"""Istanbul: Choose & Write's board (clients/web/src/boards/istanbul.ts) in a real browser, on views a real
`souk serve` sends.

The board alone: a game is created and its seats joined over HTTP; the page imports the board's module and draws
each seat's view (and the spectator's) through ``board.render``, as the shell does. The tests check the board
contract (every legal command one ``button[data-legal]``, clicking it plays that index, secrets only inside
``data-secret``, a spectator has no buttons) while random legal commands are played over HTTP to the game's end.
"""

from __future__ import annotations

import json
import random
import secrets
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import DESKTOP, PHONE

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Draws a TableView with the board into #app; `window.played` collects the indexes the board asks to play.
RENDER = """async ([table, names]) => {
  const { board } = await import("/app/js/web/src/boards/istanbul.js");
  const root = document.getElementById("app");
  root.replaceChildren();
  window.played = [];
  board.render(root, { table, names, play: (i) => window.played.push(i) });
  return board.title;
}"""


class Game:
    """An Istanbul game over HTTP: its seats' tokens, their views and legal commands, random play."""

    def __init__(self, url: str, seats: int, names: list[str]) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        created = self.http.post("/games", json={"game": "istanbul", "title": "Choose & Write", "seats": seats})
        assert created.status_code == 201, created.text
        self.id = created.json()["game_id"]
        self.names = names
        self.tokens: list[str] = []
        for name in names:
            joined = self.http.post(f"/games/{self.id}/seats",
                                    json={"name": name, "entropy": secrets.token_hex(32)})
            assert joined.status_code == 201, joined.text
            self.tokens.append(joined.json()["token"])
        self.commands = 0

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def view(self, seat: int | None, min_version: int = 0) -> dict:
        path = f"/games/{self.id}/view" if seat is None else f"/games/{self.id}/seats/{seat}/view"
        response = self.http.get(path, params={"min_version": min_version},
                                 headers=self.auth(seat) if seat is not None else {})
        assert response.status_code == 200, response.text
        return response.json()

    def send(self, seat: int, command: dict, version: int) -> int:
        self.commands += 1
        response = self.http.post(f"/games/{self.id}/seats/{seat}/commands", headers=self.auth(seat),
                                  json={"command_id": f"t{self.commands}-{secrets.token_hex(4)}",
                                        "command": command, "expected_version": version})
        assert response.status_code == 200, response.text
        return response.json()["version"]

    def close(self) -> None:
        self.http.close()


def render(page, table: dict, names: list[str]) -> None:
    assert page.evaluate(RENDER, [table, names]) == "Istanbul: Choose & Write"


def buttons(page) -> list[int]:
    return page.eval_on_selector_all("#app [data-legal]", "els => els.map(e => Number(e.dataset.legal))")


def secret_text(page) -> str:
    return page.eval_on_selector_all("#app [data-secret]", "els => els.map(e => e.textContent).join(' ')")


def public_text(page) -> str:
    """The board's text outside every data-secret element."""
    return page.evaluate("""() => {
      const copy = document.getElementById("app").cloneNode(true);
      copy.querySelectorAll("[data-secret]").forEach((e) => e.remove());
      return copy.textContent;
    }""")


def check_seat(page, game: Game, seat: int, table: dict) -> None:
    """The contract on one seat's view: one button per legal command, labelled, and clicking plays its index;
    the seat's own cards only inside data-secret."""
    render(page, table, game.names)
    legal = table["legal"]
    shown = buttons(page)
    assert sorted(shown) == list(range(len(legal))), (shown, len(legal))
    labels = page.eval_on_selector_all("#app [data-legal]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert all(label and "{" not in label for label in labels), labels
    if legal:
        pick = random.Random(table["version"]).randrange(len(legal))
        page.click(f"#app [data-legal='{pick}']")
        assert page.evaluate("window.played") == [pick]
        by_keyboard = (pick + 1) % len(legal)  # the keyboard: focus a command and press Enter
        page.focus(f"#app [data-legal='{by_keyboard}']")
        page.keyboard.press("Enter")
        assert page.evaluate("window.played") == [pick, by_keyboard]
    you = table["view"]["you"]
    if you["guild_cards"]:
        assert page.locator("#app [data-secret] [data-guild]").count() >= len(you["guild_cards"])
        assert page.locator("#app [data-guild]").count() == page.locator("#app [data-secret] [data-guild]").count()
    for face in you["goods_cards"]:
        assert page.locator(f"#app [data-secret] [data-goods-card='{face}']").count() >= 1
    assert page.locator("#app [data-goods-card]").count() == len(you["goods_cards"])


def test_the_board_draws_every_seat_and_offers_exactly_the_legal_commands_to_the_end(open_page, souk_url):
    """Two seats (the shortest game with an opponent, about 115 commands); random legal commands over HTTP, each
    seat's view drawn (every 3rd version, and every answer step) and checked; a spectator's has no buttons."""
    game = Game(souk_url, 2, ["Ayla", "Baran"])
    page = open_page("/", DESKTOP)
    rng = random.Random(20)
    try:
        version = 0
        shot = False
        while True:
            spectator = game.view(None, version)
            version = spectator["version"]
            if spectator["status"] != "playing":
                break
            awaited = spectator["flow"]["awaiting"]
            for seat in awaited:
                table = game.view(seat, version)
                if version % 3 == 0 or table["view"]["phase"] in ("act", "fountain", "keep"):
                    check_seat(page, game, seat, table)
                if not shot and table["view"]["phase"] == "act" and len(table["legal"]) > 8 and table["view"]["round"] >= 4:
                    render(page, table, game.names)
                    shoot(page, "istanbul-desktop.png")
                    page.set_viewport_size(PHONE)
                    shoot(page, "istanbul-phone.png")
                    page.set_viewport_size(DESKTOP)
                    shot = True
            seat = rng.choice(awaited)
            table = game.view(seat, version)
            render(page, spectator, game.names)
            assert buttons(page) == [] and secret_text(page) == ""
            version = game.send(seat, rng.choice(table["legal"]), table["version"])
        end = game.view(None)
        render(page, end, game.names)
        assert page.locator("#app .ist-final").count() == 1
        for seat in range(2):
            final = game.view(seat)
            assert final["legal"] == []
            render(page, final, game.names)
            assert buttons(page) == []
        assert shot
    finally:
        game.close()


def shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_a_solo_game_shows_the_challenges_at_the_end(open_page, souk_url):
    """Solo (about 60 commands): played at random to the end; the final board lists the 14 challenges with the
    ones met marked, and the solo discard's use is offered on the sheet while the game runs."""
    game = Game(souk_url, 1, ["Selim"])
    page = open_page("/", PHONE)
    rng = random.Random(1)
    try:
        version = 0
        solo_seen = False
        while True:
            table = game.view(0, version)
            version = table["version"]
            if table["status"] != "playing":
                break
            if table["view"]["phase"] == "solo" and not solo_seen:
                check_seat(page, game, 0, table)
                assert "as an opponent would" in page.text_content("#app .ist-answers h3")
                solo_seen = True
            version = game.send(0, rng.choice(table["legal"]), version)
        render(page, table, game.names)
        assert page.locator("#app .ist-challenges li").count() == 14
        met = page.locator("#app .ist-challenges li.ist-met").count()
        assert met == len(table["view"]["challenges"])
        assert solo_seen
    finally:
        game.close()
