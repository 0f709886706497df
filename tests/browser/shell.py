"""Helpers of the shell's browser tests: games made through the HTTP API where the page is not the point, and the
page's hooks (clients/web/README.md) waited on."""

from __future__ import annotations

import os
import random
import secrets
import time
from pathlib import Path

import httpx

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def screenshot(target, name: str, **options) -> bytes:
    """A screenshot of a page or a locator (taken at every run: drawing it must work), written to
    docs/screenshots/``name`` only when SOUK_SCREENSHOTS is set: a test run never changes committed files."""
    shot = target.screenshot(**options)
    if os.environ.get("SOUK_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / name).write_bytes(shot)
    return shot


def create(souk_url: str, game: str, seats: int, **options) -> str:
    body = {"game": game, "title": f"A {game} table", "seats": seats, "options": options}
    response = httpx.post(f"{souk_url}/games", json=body, timeout=15)
    assert response.status_code == 201, response.text
    return response.json()["game_id"]


def join(souk_url: str, game_id: str, name: str, seat: int | None = None) -> dict:
    response = httpx.post(f"{souk_url}/games/{game_id}/seats", json={"name": name, "seat": seat}, timeout=15)
    assert response.status_code == 201, response.text
    return response.json()


def play_first(souk_url: str, game_id: str, seat: int, token: str) -> dict:
    """Seat ``seat`` sends its first legal command through the API (the other side of a browser's game)."""
    headers = {"Authorization": f"Bearer {token}"}
    legal = httpx.get(f"{souk_url}/games/{game_id}/seats/{seat}/legal", headers=headers, timeout=15).json()
    assert legal["legal"], f"seat {seat} has nothing to play"
    body = {"command_id": secrets.token_hex(8), "command": legal["legal"][0]}
    reply = httpx.post(f"{souk_url}/games/{game_id}/seats/{seat}/commands", json=body, headers=headers, timeout=15)
    assert reply.status_code == 200, reply.text
    return reply.json()


# CI's short form of the whole games played in the browsers: the pages click the first part of the game (its
# checks, reload and screenshots all fall there), then the seats finish it through the API (``finish_over_http``)
# while the pages follow it to the end by their pushes and show the result. ``SOUK_BROWSER_GAMES=whole`` clicks
# every move of every game to the end (the long form: the browser games took 5 of the suite's 19 minutes).
WHOLE_GAMES = os.environ.get("SOUK_BROWSER_GAMES", "") == "whole"


def finish_over_http(souk_url: str, game_id: str, tokens: list[str], rng: random.Random,
                     timeout: float = 300) -> dict:
    """Plays the rest of the game through the API, each seat it awaits sending a random legal command, until the
    game is over; returns its final public view."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=souk_url, timeout=15) as http:
        view = http.get(f"/games/{game_id}/view").json()
        while view["status"] != "over":
            assert time.monotonic() < deadline, f"the game did not end over HTTP (version {view['version']})"
            version = view["version"]
            for seat in view["flow"]["awaiting"]:
                headers = {"Authorization": f"Bearer {tokens[seat]}"}
                legal = http.get(f"/games/{game_id}/seats/{seat}/legal", headers=headers).json()
                if legal["version"] != version or not legal["legal"]:
                    continue  # the game moved on meanwhile (a simultaneous decision, a clock): looked at again
                body = {"command_id": secrets.token_hex(8), "command": rng.choice(legal["legal"]),
                        "expected_version": version}
                reply = http.post(f"/games/{game_id}/seats/{seat}/commands", json=body, headers=headers)
                assert reply.status_code in (200, 409), reply.text  # 409: another seat's command came first
            view = http.get(f"/games/{game_id}/view", params={"min_version": version + 1}).json()
    return view


def spectator_view(souk_url: str, game_id: str) -> dict:
    return httpx.get(f"{souk_url}/games/{game_id}/view", timeout=15).json()


def version(page) -> int:
    return int(page.get_attribute("#table", "data-version"))


def wait_version(page, at_least: int, timeout: float = 15_000) -> int:
    """Waits until the table page shows version ``at_least`` or later (live, not travelling)."""
    page.wait_for_function(
        "v => { const t = document.getElementById('table');"
        " return t && !t.dataset.at && Number(t.dataset.version) >= v; }", arg=at_least, timeout=timeout)
    return version(page)


def take_seat(page, name: str, seat: int) -> None:
    page.fill("input[name=player-name]", name)
    page.click(f"button[data-join-seat='{seat}']")
    page.wait_for_selector(f"#table[data-seat='{seat}']")


def click_legal(page, index: int = 0) -> int:
    """Clicks legal command ``index`` and waits for the version it makes; returns it."""
    before = version(page)
    page.click(f"#board button[data-legal='{index}']")
    return wait_version(page, before + 1)


def play_turns(pages: list, turns: int) -> int:
    """Plays ``turns`` commands by clicks, each by whichever of ``pages`` (browsers of the seats) has legal commands
    at the newest version; returns the version reached."""
    reached = max(version(page) for page in pages)
    for _ in range(turns):
        for page in pages:
            wait_version(page, reached)
        deadline = time.monotonic() + 15
        while not any(page.locator("#board button[data-legal]").count() for page in pages):
            assert time.monotonic() < deadline, "no seat of these pages has a command to play"
            time.sleep(0.1)
        page = next(page for page in pages if page.locator("#board button[data-legal]").count())
        reached = click_legal(page, 0)
    return reached


# --- a game's board alone, and a game over HTTP (the boards' tests) ------------------------------------------

# Draws a TableView with a game's board into #app, without the shell; `window.played` collects the indexes the
# board asks to play. Answers the board's title.
RENDER_BOARD = """async ([game, table, names]) => {
  const { board } = await import(`/app/js/web/src/boards/${game}.js`);
  const root = document.getElementById("app");
  root.replaceChildren();
  window.played = [];
  board.render(root, { table, names, play: (i) => window.played.push(i) });
  return board.title;
}"""


def render_board(page, game: str, table: dict, names: list[str]) -> str:
    """``game``'s board drawn alone for ``table`` (a seat's or the spectator's view); its title."""
    return page.evaluate(RENDER_BOARD, [game, table, names])


def board_buttons(page) -> list[int]:
    """The indexes of the legal commands the drawn board offers (its ``data-legal`` buttons), in page order."""
    return page.eval_on_selector_all("#app [data-legal]", "els => els.map(e => Number(e.dataset.legal))")


def board_secret_text(page) -> str:
    """The text the drawn board shows inside its ``data-secret`` elements."""
    return page.eval_on_selector_all("#app [data-secret]", "els => els.map(e => e.textContent).join(' ')")


class GameOverHttp:
    """A game over HTTP: its seats' tokens, their views, and commands sent with fresh ids (``commands`` counts
    them)."""

    def __init__(self, url: str, names: list[str]) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.names = names
        self.tokens: list[str] = []
        self.commands = 0
        self.id = ""

    def create(self, body: dict) -> None:
        created = self.http.post("/games", json=body)
        assert created.status_code == 201, created.text
        self.id = created.json()["game_id"]

    def join(self, name: str, entropy: str) -> None:
        joined = self.http.post(f"/games/{self.id}/seats", json={"name": name, "entropy": entropy})
        assert joined.status_code == 201, joined.text
        self.tokens.append(joined.json()["token"])

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
