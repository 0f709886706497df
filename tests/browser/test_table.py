"""A game's page in the web client, driven in Chromium: seats taken from several browsers, the generic board
played by clicks and by the keyboard alone, a reload that rejoins and catches up, a spectator, the connection
banner while the socket is down, the history and its scrubber, an undo asked and granted, a whole game to its end
with the replay, the record's download and its verification, and the bots filling the free seats."""

from __future__ import annotations

import random
import re
import time

import httpx
import pytest

from tests.browser.conftest import PHONE
from tests.browser.shell import (click_legal, create, join, play_first, play_turns, spectator_view, take_seat, version,
                                 wait_version)


def started_yspahan(souk_url: str, open_page) -> tuple[str, object, dict]:
    """A 2-seat Yspahan with seat 0 taken in a browser (Ali) and seat 1 through the API (Bea); seat 0 plays first."""
    game_id = create(souk_url, "yspahan", 2)
    page = open_page(f"/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    bea = join(souk_url, game_id, "Bea", seat=1)
    page.wait_for_selector("#board button[data-legal='0']")
    return game_id, page, bea


def test_two_browsers_take_seats_and_play_a_reload_rejoins_and_catches_up_a_spectator_follows(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    ali = open_page(f"/#/games/{game_id}")
    bea = open_page(f"/#/games/{game_id}", viewport=PHONE)
    take_seat(ali, "Ali", 0)
    take_seat(bea, "Bea", 1)
    watcher = open_page(f"/#/games/{game_id}")
    ali.wait_for_selector("#board button[data-legal='0']")

    reached = play_turns([ali, bea], 4)  # the dice rolled, groups picked...: the generic board's buttons
    assert wait_version(bea, reached) == reached and wait_version(watcher, reached) == reached
    assert bea.get_attribute("#table", "data-seat") == "1" and watcher.get_attribute("#table", "data-seat") == "spectator"
    assert watcher.locator("[data-legal]").count() == 0 and watcher.locator("[data-join-seat]").count() == 0
    assert "Ali" in bea.text_content("#seats") and "Bea" in bea.text_content("#seats")
    awaited = ali.get_attribute("#seats [data-awaited='true']", "data-seat-row")
    assert awaited == str(spectator_view(souk_url, game_id)["flow"]["awaiting"][0])
    assert bea.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # Ali's browser goes away; the game moves on without it; it comes back to the game's address
    tokens = [page.evaluate("JSON.parse(localStorage.getItem('souk.seats'))")[game_id]["token"] for page in (ali, bea)]
    ali.goto("about:blank")
    seat = spectator_view(souk_url, game_id)["flow"]["awaiting"][0]
    moved = play_first(souk_url, game_id, seat, tokens[seat])["version"]
    ali.goto(f"{souk_url}/#/games/{game_id}")
    ali.wait_for_selector("#table[data-seat='0']")
    assert wait_version(ali, moved) == spectator_view(souk_url, game_id)["version"]
    ali.wait_for_selector(f"#history li[data-seq='{moved}']")
    ali.reload()
    ali.wait_for_selector("#table[data-seat='0']")
    wait_version(ali, moved)
    assert ali.locator("[data-join-seat]").count() == 0


def test_a_command_the_server_refuses_shows_its_reason_and_changes_nothing(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    page = open_page("/")
    open_page.allow_refusals(409)
    held = False

    def socket(ws):  # the server's pushes reach the page unless held
        server = ws.connect_to_server()
        server.on_message(lambda message: None if held else ws.send(message))

    page.route_web_socket(re.compile(r"/ws(\?.*)?$"), socket)
    page.goto(f"{souk_url}/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    join(souk_url, game_id, "Bea", seat=1)
    page.wait_for_selector("#board button[data-legal='0']")
    # another tab of Ali's plays first; this page, not told yet, sends a command decided on the version before
    token = page.evaluate("JSON.parse(localStorage.getItem('souk.seats'))")[game_id]["token"]
    held = True
    before = version(page)
    played = play_first(souk_url, game_id, 0, token)["version"]
    page.click("#board button[data-legal='0']")
    page.wait_for_selector("#message:not(:empty)")
    assert "stale" in page.text_content("#message")
    assert spectator_view(souk_url, game_id)["version"] == played and version(page) == before


def test_keyboard_alone_takes_a_seat_and_plays(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    join(souk_url, game_id, "Bea", seat=1)
    page = open_page(f"/#/games/{game_id}")
    page.wait_for_selector("button[data-join-seat='0']")

    def tab_to(test: str) -> None:
        for _ in range(60):
            page.keyboard.press("Tab")
            if page.evaluate(f"(() => {{ const e = document.activeElement; return !!e && ({test}); }})()"):
                return
        raise AssertionError(f"Tab never reached {test}")

    tab_to("e.name === 'player-name'")
    page.keyboard.press("Control+A")
    page.keyboard.type("Ali")
    tab_to("e.dataset.joinSeat === '0'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#table[data-seat='0'] #board button[data-legal='0']")
    tab_to("e.dataset.legal !== undefined")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus is visible
    before = version(page)
    page.keyboard.press("Enter")
    after = wait_version(page, before + 1)
    # the new view keeps the focus on the board's commands: Enter plays again
    page.wait_for_function("document.activeElement && document.activeElement.dataset.legal !== undefined")
    page.keyboard.press("Enter")
    wait_version(page, after + 1)


def test_a_command_played_as_soon_as_the_new_view_shows_goes_while_the_last_answer_is_on_its_way(open_page, souk_url):
    """The view a command made can reach the page before the command's answer (the socket's push and the POST's
    answer race; CI's loaded machine saw it): the next move, played from that view, is sent, not dropped."""
    game_id = create(souk_url, "yspahan", 2)
    page = open_page("/")
    # the answers to the page's commands reach it 3 s after the server gave them; the views come at once
    page.evaluate("""() => {
      const fetch = window.fetch.bind(window);
      window.fetch = async (...args) => {
        const answer = await fetch(...args);
        const url = String(args[0] instanceof Request ? args[0].url : args[0]);
        if (/\\/commands$/.test(url)) await new Promise((done) => setTimeout(done, 3000));
        return answer;
      };
    }""")
    page.goto(f"{souk_url}/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    join(souk_url, game_id, "Bea", seat=1)
    page.wait_for_selector("#board button[data-legal='0']")
    before = version(page)
    page.click("#board button[data-legal='0']")
    after = wait_version(page, before + 1)
    assert page.get_attribute("#table", "aria-busy") == "true"  # the view came, the answer is still on its way
    page.wait_for_selector("#table[data-seat='0'] #board button[data-legal='0']")
    page.click("#board button[data-legal='0']")
    assert wait_version(page, after + 1) == spectator_view(souk_url, game_id)["version"]


def test_a_double_click_on_a_move_sends_it_once(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    page = open_page("/")
    held: list | None = None  # the pushes kept back while a list

    def socket(ws):
        server = ws.connect_to_server()
        server.on_message(lambda message: ws.send(message) if held is None else held.append((ws, message)))

    page.route_web_socket(re.compile(r"/ws(\?.*)?$"), socket)
    page.goto(f"{souk_url}/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    join(souk_url, game_id, "Bea", seat=1)
    page.wait_for_selector("#board button[data-legal='0']")
    sent = []
    page.on("request", lambda request: sent.append(request.url) if request.url.endswith("/commands") else None)
    before, held = version(page), []
    with page.expect_response(lambda response: response.url.endswith("/commands")):
        page.dblclick("#board button[data-legal='0']")
    page.wait_for_timeout(300)  # a second request would have left by now
    assert len(sent) == 1 and spectator_view(souk_url, game_id)["version"] == before + 1
    pushes, held = held, None
    for ws, message in pushes:
        ws.send(message)
    assert wait_version(page, before + 1) == before + 1


def test_the_banner_shows_while_the_socket_is_down_and_the_page_catches_up_after(open_page, souk_url):
    game_id = create(souk_url, "yspahan", 2)
    tokens = [join(souk_url, game_id, name)["token"] for name in ("Ali", "Bea")]
    page = open_page("/")
    blocked = False
    routes = []

    def socket(ws):
        if blocked:
            ws.close()  # the server is unreachable: the socket closes at once
        else:
            ws.connect_to_server()
            routes.append(ws)

    page.route_web_socket(re.compile(r"/ws(\?.*)?$"), socket)
    page.goto(f"{souk_url}/#/games/{game_id}")
    page.wait_for_selector("#connection[data-status='open']")
    start = version(page)

    blocked = True
    for ws in routes:
        ws.close()
    page.wait_for_selector("#connection[data-status='down']")
    assert page.is_visible("#connection") and "Disconnected" in page.text_content("#connection")
    moved = play_first(souk_url, game_id, 0, tokens[0])["version"]
    time.sleep(1)
    assert version(page) == start  # nothing came meanwhile
    blocked = False
    page.wait_for_selector("#connection[data-status='open']", timeout=15_000)
    assert wait_version(page, moved) == moved
    assert "Disconnected" not in page.text_content("#connection")


def test_the_history_and_its_scrubber_show_the_past_read_only(open_page, souk_url):
    game_id, page, bea = started_yspahan(souk_url, open_page)
    live = version(page)
    for _ in range(4):  # Ali by clicks, Bea through the API
        if spectator_view(souk_url, game_id)["flow"]["awaiting"] == [1]:
            live = wait_version(page, play_first(souk_url, game_id, 1, bea["token"])["version"])
        else:
            live = click_legal(page, 0)
    page.wait_for_selector(f"#history li[data-seq='{live}']")
    assert page.locator("#history li").count() == live
    offered = page.locator("#board [data-legal]").count()  # Ali's commands now (none if Bea is to play)

    page.click("#travel-prev")
    page.wait_for_selector(f"#table[data-at='{live - 1}']")
    assert version(page) <= live - 1 and page.locator("#board [data-legal]").count() == 0
    assert page.url.endswith(f"?at={live - 1}")
    page.click("#history li[data-seq='2'] button")  # a history entry: the table at its version
    page.wait_for_selector("#table[data-at='2']")
    page.focus("#scrubber")
    page.keyboard.press("End")  # the scrubber by keyboard: its end is the live table
    page.wait_for_function("!document.getElementById('table').dataset.at")
    assert version(page) == live and page.locator("#board [data-legal]").count() == offered

    page.goto(f"{souk_url}/#/games/{game_id}?at=3")  # a link to the past
    page.wait_for_selector("#table[data-at='3']")
    page.click("#travel-live")
    page.wait_for_function("!document.getElementById('table').dataset.at")
    assert version(page) == live and page.locator("#board [data-legal]").count() == offered


def test_an_undo_asked_to_the_other_seats_is_answered_from_their_pages(open_page, souk_url):
    game_id = create(souk_url, "samarkand", 3, undo="with_consent")
    ali = open_page(f"/#/games/{game_id}")
    bea = open_page(f"/#/games/{game_id}")
    take_seat(ali, "Ali", 0)
    take_seat(bea, "Bea", 1)
    cyr = join(souk_url, game_id, "Cyr", seat=2)
    ali.wait_for_selector("#board button[data-legal='0']")
    before = version(ali)
    reached = click_legal(ali, 0)  # Ali, then Bea, choose a card face down
    bea.wait_for_selector("#board button[data-legal='0']")
    wait_version(bea, reached)
    reached = click_legal(bea, 0)

    ali.wait_for_selector(f"#undo button[data-undo='{before}']")
    ali.click(f"#undo button[data-undo='{before}']")  # taking back Bea's choice too: she and Cyr are asked
    bea.wait_for_selector("#undo-accept")
    assert "Ali asks" in bea.text_content("#undo-request")
    ali.wait_for_selector("#undo-decline")  # Ali may withdraw it
    headers = {"Authorization": f"Bearer {cyr['token']}"}
    answer = httpx.post(f"{souk_url}/games/{game_id}/seats/2/undo/accept", headers=headers,
                        json={"command_id": "cyr-accepts"})
    assert answer.status_code == 200, answer.text
    bea.click("#undo-accept")
    ali.wait_for_selector("#undo .note")
    undo = spectator_view(souk_url, game_id)["undo"]
    assert undo["request"] is None and undo["undone"][0]["first"] == before + 1
    assert "took back" in bea.text_content("#undo")
    bea.wait_for_selector("#history li.undone")


def test_a_whole_game_with_the_generic_board_then_its_replay_record_and_verdict(open_page, souk_url):
    game_id = create(souk_url, "istanbul", 1)  # Istanbul alone: about sixty decisions
    page = open_page(f"/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    rng = random.Random(20)
    for _ in range(400):
        page.wait_for_selector("#board button[data-legal='0'], #result")
        if page.locator("#result").count():
            break
        click_legal(page, rng.randrange(page.locator("#board button[data-legal]").count()))
    else:
        pytest.fail("the game did not end in 400 commands")
    end = version(page)
    assert "Game over" in page.text_content("#result")
    score = spectator_view(souk_url, game_id)["result"]["scores"][0]
    assert f"Ali: {score}" in page.text_content("#result")

    # the replay: step through the versions
    page.click("#travel-first")
    page.wait_for_selector("#table[data-at='1']")
    page.click("#travel-next")
    page.wait_for_selector("#table[data-at='2']")
    page.click("#travel-live")
    page.wait_for_function("v => !document.getElementById('table').dataset.at && "
                           "Number(document.getElementById('table').dataset.version) === v", arg=end)

    # the record: a file, byte for byte as the server serves it, and its verdict
    with page.expect_download() as download:
        page.click("#record-download")
    saved = download.value.path().read_bytes()
    assert saved == httpx.get(f"{souk_url}/games/{game_id}/record").content
    assert download.value.suggested_filename == f"{game_id}.souk.json"
    page.click("#record-verify")
    page.wait_for_selector("#verdict[data-ok='true']")
    assert page.text_content("#verdict").strip().startswith("✔ OK")

    # a rematch: the same seat in a new game of the same table, which starts as its last seat comes in
    page.click("#rematch")
    page.wait_for_function("id => { const t = document.getElementById('table');"
                           " return t && t.dataset.gameId !== id && t.dataset.seat === '0'"
                           " && t.dataset.status === 'playing'; }", arg=game_id)
    rematch = page.get_attribute("#table", "data-game-id")
    assert httpx.get(f"{souk_url}/games/{rematch}").json()["rematch_of"] == game_id
    page.wait_for_selector("#board button[data-legal='0']")


def test_the_free_seats_are_filled_with_bots(open_page, souk_url):
    probe = httpx.post(f"{souk_url}/games/nothing/bots", json={})
    if probe.json().get("code") != "game_not_found":
        pytest.skip("POST /games/{id}/bots is not on this branch yet (branch liveness)")
    game_id = create(souk_url, "yspahan", 3)
    page = open_page(f"/#/games/{game_id}")
    take_seat(page, "Ali", 0)
    page.select_option("#bot-strategy", "random")
    page.click("#fill-bots")
    page.wait_for_selector("#table[data-status='playing']")
    seats = spectator_view(souk_url, game_id)["seats"]
    assert [seat["bot"] for seat in seats] == [None, "random", "random"]
    assert page.locator("#seats .tag.bot").count() == 2
    assert page.locator("#fill-bots").count() == 0
