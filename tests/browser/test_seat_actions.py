"""A seat's own acts on the table page, driven in Chromium (issue #20): leave before the start, resign during the
game, fork after the end from the version shown, each asked first and sent only when confirmed, a refusal shown;
and the replay after the end that plays by itself (play, pause, speed) beside stepping one version at a time."""

from __future__ import annotations

import json
import random

import httpx

from tests.browser.conftest import PHONE
from tests.browser.shell import GameOverHttp, create, join, spectator_view, take_seat, version

AT = "document.getElementById('table').dataset.at"


def test_leave_and_resign_are_confirmed_first_and_a_refusal_is_shown(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    page = open_page(f"/#/games/{game_id}")
    take_seat(page, "Ali", 0)

    # leave before the start: asked, cancelled (nothing sent), asked again and confirmed
    page.click("#seat-actions #leave")
    assert "Give seat 0 back" in page.text_content("#confirm")
    assert page.evaluate("document.activeElement.id") == "confirm-no"  # the safe answer has the focus
    page.click("#confirm-no")
    assert page.locator("#confirm").count() == 0
    assert httpx.get(f"{souk_url}/games/{game_id}").json()["seats"][0]["name"] == "Ali"
    page.click("#seat-actions #leave")
    page.click("#confirm-yes")
    page.wait_for_selector("#table[data-seat='spectator'] button[data-join-seat='0']")
    assert httpx.get(f"{souk_url}/games/{game_id}").json()["seats"][0]["name"] is None
    assert game_id not in json.loads(page.evaluate("localStorage.getItem('souk.seats') || '{}'"))
    assert "You left seat 0" in page.text_content("#message")

    # back in, the game starts: no leave any more, a resign
    take_seat(page, "Ali", 0)
    join(souk_url, game_id, "Bea", seat=1)
    page.wait_for_selector("#table[data-status='playing'] #seat-actions #resign")
    assert page.locator("#seat-actions #leave").count() == 0

    # a refusal (the server's answer held back and replaced) shows its reason; the seat stays in
    open_page.allow_refusals(409)
    refused = {"code": "game_over", "message": "the game is over"}
    page.route("**/seats/0/resign", lambda route: route.fulfill(status=409, content_type="application/json",
                                                                body=json.dumps(refused)))
    page.click("#seat-actions #resign")
    page.click("#confirm-yes")
    page.wait_for_selector("#message:has-text('Refused')")
    assert "game_over" in page.text_content("#message") or "the game is over" in page.text_content("#message")
    assert spectator_view(souk_url, game_id)["status"] == "playing"
    page.unroute("**/seats/0/resign")

    # resigned for real: two seats, one left, the game ends and the other seat wins
    page.click("#seat-actions #resign")
    assert "Resign for good" in page.text_content("#confirm")
    page.click("#confirm-yes")
    page.wait_for_selector("#table[data-status='over'] #result")
    assert spectator_view(souk_url, game_id)["result"]["winners"] == [1]
    assert page.locator("#seat-actions #resign").count() == 0


def finished_istanbul(souk_url: str) -> GameOverHttp:
    """Istanbul alone (about sixty decisions), played to its end over HTTP at random."""
    game = GameOverHttp(souk_url, ["Ali"])
    game.create({"game": "istanbul", "title": "A replay", "seats": 1})
    game.join("Ali", "ab" * 32)
    rng = random.Random(7)
    view = game.view(0)
    for _ in range(600):
        if view["status"] == "over":
            return game
        version = game.send(0, rng.choice(view["legal"]), view["version"])
        view = game.view(0, min_version=version)
    raise AssertionError("Istanbul alone did not end in 600 commands")


def test_the_replay_plays_by_itself_and_pauses_and_a_fork_starts_from_the_version_shown(open_page, souk_url):
    game = finished_istanbul(souk_url)
    end = spectator_view(souk_url, game.id)["version"]
    # a spectator (anyone may replay and fork a public game), at a phone's width
    page = open_page(f"/#/games/{game.id}", viewport=PHONE)
    page.wait_for_selector("#table[data-status='over'] #travel-play[data-playing='false']")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.locator("#seat-actions #resign, #seat-actions #leave").count() == 0

    # play from the start, fast; pause: it stays where it is
    page.select_option("#travel-speed", "250")
    page.click("#travel-play")
    page.wait_for_function(f"Number({AT}) >= 3")
    assert page.get_attribute("#travel-play", "data-playing") == "true"
    page.click("#travel-play")
    assert page.get_attribute("#travel-play", "data-playing") == "false"
    paused = int(page.get_attribute("#table", "data-at"))
    page.wait_for_timeout(800)
    assert int(page.get_attribute("#table", "data-at")) == paused and version(page) <= paused

    # a step by hand from near the end, then play on: it stops at the end, on the live table and its result
    page.click(f"#history li[data-seq='{end - 3}'] button")
    page.wait_for_selector(f"#table[data-at='{end - 3}']")
    page.click("#travel-play")
    page.wait_for_function(f"!{AT} && Number(document.getElementById('table').dataset.version) === {end}",
                           timeout=10_000)
    page.wait_for_selector("#travel-play[data-playing='false']")
    assert page.locator("#result").count() == 1

    # a fork of the version shown: asked first, then the new game's page, its position from that version
    page.click(f"#history li[data-seq='{end - 5}'] button")
    page.wait_for_selector(f"#table[data-at='{end - 5}']")
    page.click("#seat-actions #fork")
    assert f"version {end - 5}" in page.text_content("#confirm")
    page.click("#confirm-yes")
    page.wait_for_function("id => { const t = document.getElementById('table');"
                           " return t && t.dataset.gameId !== id && t.dataset.status === 'open'; }", arg=game.id)
    fork = page.get_attribute("#table", "data-game-id")
    entry = httpx.get(f"{souk_url}/games/{fork}").json()
    assert entry["forked_from"]["game_id"] == game.id and entry["forked_from"]["version"] == end - 5
    page.wait_for_selector("button[data-join-seat='0']")
    game.close()
