"""Helpers of the shell's browser tests: games made through the HTTP API where the page is not the point, and the
page's hooks (clients/web/README.md) waited on."""

from __future__ import annotations

import secrets
import time

import httpx


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
