"""1001 Karawane's board (clients/web/src/boards/karawane.ts) in a real browser, on views a real `souk serve` sends.

The board alone: a game is created and its seats joined over HTTP; the page imports the board's module and draws
each seat's view (and the spectator's) through ``board.render``, as the shell does. The tests check the board
contract (every legal command one ``button[data-legal]`` with a label in the game's words, clicking it plays that
index, this seat's secrets only inside ``data-secret``, a spectator has no buttons) while the game is played over
HTTP to its end. Random play seldom ends a game of Karawane (a caravan must bring home all three artifacts), so
each seat's command is the artifact seeker's (services/bots ``seeker``), chosen from that seat's view alone.
"""

from __future__ import annotations

import random
import secrets
from pathlib import Path

import httpx
import msgspec

from contracts.karawane import Options
from services.bots.strategies import SeekerStrategy
from services.client.remote_bot import choose
from services.client.sdk import _typed_view, _view
from tests.browser.conftest import DESKTOP, PHONE

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Draws a TableView with the board into #app; `window.played` collects the indexes the board asks to play.
RENDER = """async ([table, names]) => {
  const { board } = await import("/app/js/web/src/boards/karawane.js");
  const root = document.getElementById("app");
  root.replaceChildren();
  window.played = [];
  board.render(root, { table, names, play: (i) => window.played.push(i) });
  return board.title;
}"""

KINDS = ("desert", "city", "oasis", "caravanserai", "tower", "mausoleum", "ruins")


class Game:
    """A Karawane game over HTTP: its seats' tokens, their views, the seeker's command for a seat."""

    def __init__(self, url: str, names: list[str]) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        created = self.http.post("/games", json={"game": "karawane", "title": "1001 Karawane", "seats": len(names)})
        assert created.status_code == 201, created.text
        self.id = created.json()["game_id"]
        self.names = names
        self.tokens: list[str] = []
        for name in names:
            joined = self.http.post(f"/games/{self.id}/seats", json={"name": name, "entropy": secrets.token_hex(32)})
            assert joined.status_code == 201, joined.text
            self.tokens.append(joined.json()["token"])
        self.commands = 0
        self.seeker = SeekerStrategy()

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def view(self, seat: int | None, min_version: int = 0) -> dict:
        path = f"/games/{self.id}/view" if seat is None else f"/games/{self.id}/seats/{seat}/view"
        response = self.http.get(path, params={"min_version": min_version},
                                 headers=self.auth(seat) if seat is not None else {})
        assert response.status_code == 200, response.text
        return response.json()

    def pick(self, table: dict, rng: random.Random) -> int:
        """The index in ``table["legal"]`` of the seeker's command for the seat, from its view alone."""
        typed = _typed_view(_view.decode(msgspec.json.encode(table)))
        command = choose(typed, self.seeker, Options(), rng)
        return list(typed.legal).index(command)

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
    assert page.evaluate(RENDER, [table, names]) == "1001 Karawane"


def buttons(page) -> list[int]:
    return page.eval_on_selector_all("#app [data-legal]", "els => els.map(e => Number(e.dataset.legal))")


def secret_text(page) -> str:
    return page.eval_on_selector_all("#app [data-secret]", "els => els.map(e => e.textContent).join(' ')")


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


def shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_the_board_draws_every_seat_and_offers_exactly_the_legal_commands_to_the_end(open_page, souk_url):
    """Two seats (the shortest game), each playing the seeker's command; every awaited seat's view is drawn and
    checked (the button clicked is the one sent), the spectator's every few versions; the final board shows the
    scores and no buttons."""
    game = Game(souk_url, ["Ayla", "Baran"])
    page = open_page("/", DESKTOP)
    rng = random.Random(7)
    try:
        version, shot, phases = 0, False, set()
        while True:
            spectator = game.view(None, version)
            version = spectator["version"]
            if spectator["status"] != "playing":
                break
            if version % 5 == 0:
                check_spectator(page, game, spectator)
            (seat,) = spectator["flow"]["awaiting"]
            table = game.view(seat, version)
            pick = game.pick(table, rng)
            check_seat(page, game, table, pick)
            phases.add(table["view"]["phase"])
            view = table["view"]
            if (not shot and view["phase"] == "move" and view["round"] >= 4
                    and any(h["kind"] and not h["face_up"] for h in view["hexes"])):
                render(page, table, game.names)
                shoot(page, "karawane-desktop.png")
                page.set_viewport_size(PHONE)
                shoot(page, "karawane-phone.png")
                page.set_viewport_size(DESKTOP)
                shot = True
            version = game.send(seat, table["legal"][pick], version)
        assert {"equip", "move", "moving", "desert", "home"} <= phases, phases
        end = game.view(None)
        render(page, end, game.names)
        assert page.locator("#app .kar-final li").count() == 2
        assert page.locator("#app .kar-final .kar-winner").count() == len(end["view"]["winners"]) >= 1
        for seat in range(2):
            final = game.view(seat)
            assert final["legal"] == []
            render(page, final, game.names)
            assert buttons(page) == []
        assert shot
    finally:
        game.close()
