"""Le marché de Samarkand in the reference web client, in real browsers (issue #20, sections 2 and 3).

Three merchants, each in a browser context of its own, join one game through the page and play it to its end by
clicking the board's ``[data-legal]`` buttons (a card of the hand, "Stop!" on a stall, "Pass"); a spectator
follows. Three seats (the fewest the game allows; the bank sells a fourth type, so its stall is drawn too) and
the stepwise countdown with seats that call "Stop!" often keep the game short: ten rounds of about fifteen clicks,
about a minute on an idle machine (``SOUK_BROWSER_GAMES=whole``; by default, CI's short form, the pages click the
first three rounds and the seats finish the game over HTTP while the pages follow it to the end). Along the way
every page shows only its own secrets (its hand and its screen, compared with what each seat holds, read from the
seats' views over HTTP), a reload in the middle rejoins and catches up, and the screenshots of docs/screenshots
are taken (written there when SOUK_SCREENSHOTS=1).

A second test watches the real-time countdown tick on the board without anyone clicking.
"""

from __future__ import annotations

import json
import os
import random
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.shell import WHOLE_GAMES, finish_over_http

NAMES = ("Ana", "Bahram", "Chirine")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# The rounds the merchants play by clicking: all ten with SOUK_BROWSER_GAMES=whole, else the first three (the reload
# and the screenshots fall in them), then the seats finish the game over HTTP while the pages follow to the end
CLICKED_ROUNDS = 10 if WHOLE_GAMES else 3


def create(url: str, options: dict | None = None) -> str:
    body = {"game": "samarkand", "title": "Le marché", "seats": 3, "request_id": uuid.uuid4().hex,
            "options": options or {}}
    response = httpx.post(url + "/games", json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()["game_id"]


def public_view(url: str, game_id: str, min_version: int = 0) -> dict:
    response = httpx.get(f"{url}/games/{game_id}/view", params={"min_version": min_version})
    assert response.status_code == 200, response.text
    return response.json()


def seat_view(url: str, game_id: str, seat: int, token: str) -> dict:
    response = httpx.get(f"{url}/games/{game_id}/seats/{seat}/view", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


def join_in_page(page, seat: int, name: str) -> str:
    """Takes `seat` through the page's join form; returns the token the page keeps in localStorage."""
    page.wait_for_selector(f'button[data-join-seat="{seat}"]')
    page.fill("input[name=player-name]", name)
    page.click(f'button[data-join-seat="{seat}"]')
    page.wait_for_selector(f'#table[data-seat="{seat}"]')
    held = json.loads(page.evaluate("localStorage.getItem('souk.seats')"))
    return next(iter(held.values()))["token"]


def shows_version(page, version: int, timeout: float = 15_000) -> None:
    page.wait_for_function(f"Number(document.querySelector('#table')?.dataset.version) >= {version}",
                           timeout=timeout)


def check_secrets(pages: list, spectator, url: str, game_id: str, tokens: list[str]) -> None:
    """Each seat's page holds its own hand and screen, inside `data-secret`, and nothing of the others' but counts;
    the spectator's page holds no secret at all."""
    views = [seat_view(url, game_id, s, t)["view"] for s, t in enumerate(tokens)]
    lifted = views[0]["phase"] in ("scoring", "over")
    for seat, page in enumerate(pages):
        own = views[seat]
        sells = own["players"][seat]["sells"]
        hand = page.eval_on_selector_all("#board [data-hand]", "els => els.map(e => [e.dataset.hand,"
                                         " Number(e.dataset.count), !!e.closest('[data-secret]')])")
        assert all(secret for _, _, secret in hand), f"seat {seat}'s hand drawn outside data-secret"
        shown = Counter({key: count for key, count, _ in hand})
        assert shown == Counter(f"{sells}:{v}" for v in own["you"]["hand"]), (seat, shown, own["you"]["hand"])
        money = page.eval_on_selector_all("#board [data-money]", "els => els.map(e => [Number(e.dataset.money),"
                                          " Number(e.closest('[data-screen]').dataset.screen),"
                                          " !!e.closest('[data-secret]')])")
        if lifted:
            assert sorted(s for _, s, _ in money) == [0, 1, 2]
        else:  # only its own screen, behind which it sees its money
            assert money == [[own["players"][seat]["money"], seat, True]], (seat, money)
        for other, theirs in enumerate(views):
            if other != seat:  # another seat's hand: its size, never its cards
                count = page.get_attribute(f'#board [data-player="{other}"] [data-hand-count]', "data-hand-count")
                assert int(count) == len(theirs["you"]["hand"])
    assert spectator.locator("#board [data-secret], #board [data-hand], #board [data-legal]").count() == 0
    if not lifted:
        assert spectator.locator("#board [data-money]").count() == 0


def choose(page, rng: random.Random) -> str:
    """Which button the merchant clicks: a random card of the hand; in the countdown "Stop!" on a random stall
    nine times in ten when its screen holds the price (the market empties sooner, the round ends sooner), else
    "Pass"; at the scoring a random goods card or type."""
    buttons = page.locator("#board [data-legal]")
    labels = buttons.evaluate_all("els => els.map(e => e.getAttribute('aria-label') || '')")
    assert labels, "an awaited seat's board offers no command"
    stops = [i for i, label in enumerate(labels) if label.startswith("Stop!")]
    passes = [i for i, label in enumerate(labels) if label.startswith("Pass")]
    if passes and stops:
        value = int(page.get_attribute("#board .smk", "data-value"))
        money = int(page.get_attribute("#board .smk-mine [data-money]", "data-money"))
        pick = rng.choice(stops) if money >= value and rng.random() < 0.9 else passes[0]
    else:
        pick = rng.randrange(len(labels))
    buttons.nth(pick).click()
    return labels[pick]


def test_three_merchants_play_a_whole_game_in_their_browsers_and_a_spectator_follows(open_page, souk_url):
    rng = random.Random(20)
    game_id = create(souk_url)
    viewports = (DESKTOP, PHONE, DESKTOP)
    pages, tokens = [], []
    for seat, name in enumerate(NAMES):
        page = open_page(f"/#/games/{game_id}", viewport=viewports[seat])
        tokens.append(join_in_page(page, seat, name))
        pages.append(page)
    spectator = open_page(f"/#/games/{game_id}")
    spectator.wait_for_selector('#table[data-seat="spectator"] .smk')

    clicks, reloaded, checked, shots = 0, False, set(), set()
    started = time.monotonic()
    deadline = time.monotonic() + 600  # about a minute when idle; a loaded machine is slower
    view = public_view(souk_url, game_id)
    while view["status"] != "over":
        assert time.monotonic() < deadline, f"the game did not end (round {view['flow']['round']})"
        version, flow = view["version"], view["flow"]
        round_ = flow["round"]
        if round_ not in checked and flow["phase"] == "choosing":
            for page in (*pages, spectator):
                shows_version(page, version)
            check_secrets(pages, spectator, souk_url, game_id, tokens)
            checked.add(round_)
        if round_ > CLICKED_ROUNDS:  # CI's short form: the seats finish the game over HTTP, the pages follow
            view = finish_over_http(souk_url, game_id, tokens, rng)
            break
        if round_ == min(5, CLICKED_ROUNDS) and not reloaded:  # a reload: the page rejoins with its token, catches up
            pages[1].reload()
            pages[1].wait_for_selector('#table[data-seat="1"] .smk')
            reloaded = True
        if round_ >= min(4, CLICKED_ROUNDS) and flow["phase"] == "countdown" and not shots:
            for seat, name in ((0, "desktop"), (1, "phone")):
                shows_version(pages[seat], version)
                shot = pages[seat].screenshot(full_page=True)
                shots.add(name)
                if os.environ.get("SOUK_SCREENSHOTS"):
                    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    (SCREENSHOTS / f"samarkand-{name}.png").write_bytes(shot)
        awaited = flow["awaiting"]  # simultaneous decisions (cards, each value of the countdown): all clicked at once
        for seat in awaited:
            page = pages[seat]
            shows_version(page, version)
            page.wait_for_selector("#board .smk [data-legal]")
            choose(page, rng)
            clicks += 1
        # every accepted command is at least one event: the game moved on by as many as were clicked
        # (the gateway waits 3 s at most for a version: on a loaded machine a click's command may take longer)
        view = public_view(souk_url, game_id, min_version=version + len(awaited))
        waited = time.monotonic() + 30
        while view["version"] < version + len(awaited) and time.monotonic() < waited:
            view = public_view(souk_url, game_id, min_version=version + len(awaited))
        assert view["version"] >= version + len(awaited), "a click on a legal command changed nothing"

    assert reloaded and shots == {"desktop", "phone"} and len(checked) == min(10, CLICKED_ROUNDS + 1)
    final = view["version"]
    for page in (*pages, spectator):
        shows_version(page, final)
        page.wait_for_selector("#result")
        page.wait_for_selector(".smk-scores")
        assert page.locator("#board [data-legal]").count() == 0
    scores = view["result"]["scores"]
    table = spectator.inner_text(".smk-scores")
    assert all(str(s) in table for s in scores)
    check_secrets(pages, spectator, souk_url, game_id, tokens)  # screens lifted: everyone's money is public
    assert clicks >= min(10, CLICKED_ROUNDS) * 3
    print(f"{clicks} clicks in {time.monotonic() - started:.0f} s")


def test_the_real_time_countdown_ticks_on_the_board_by_itself(open_page, souk_url):
    """Real time: once the cards are revealed (this seat's put up from the keyboard) the dean's count goes down
    every countdown_interval_ms with nobody clicking; the board shows each value and the time left on it, offers
    "Stop!" on the stalls and no "Pass"."""
    game_id = create(souk_url, {"countdown_mode": "realtime", "countdown_interval_ms": 600})
    page = open_page(f"/#/games/{game_id}")
    token = join_in_page(page, 0, NAMES[0])
    others = {}
    for seat in (1, 2):
        joined = httpx.post(f"{souk_url}/games/{game_id}/seats",
                            json={"name": NAMES[seat], "seat": seat, "request_id": uuid.uuid4().hex})
        assert joined.status_code in (200, 201), joined.text
        others[seat] = joined.json()["token"]
    public_view(souk_url, game_id, min_version=1)
    for seat, other in others.items():
        hand = seat_view(souk_url, game_id, seat, other)["view"]["you"]["hand"]
        sent = httpx.post(f"{souk_url}/games/{game_id}/seats/{seat}/commands",
                          headers={"Authorization": f"Bearer {other}"},
                          json={"command": {"type": "samarkand.ChooseCard", "value": hand[-1]},
                                "command_id": uuid.uuid4().hex})
        assert sent.status_code in (200, 201, 202), sent.text
    page.wait_for_selector('#board [data-legal][aria-label^="Put up"]')
    # a locator, found again at each use: a push may redraw the board between the wait and the focus (CI: an
    # ElementHandle "not attached to the DOM")
    page.locator('#board [data-legal][aria-label^="Put up"]').first.focus()  # by keyboard: a card is a button
    page.keyboard.press("Enter")
    page.wait_for_selector('.smk[data-phase="countdown"]')
    assert seat_view(souk_url, game_id, 0, token)["view"]["phase"] == "countdown"
    seen: list[int] = []
    stop = time.monotonic() + 4
    while time.monotonic() < stop and len(seen) < 4:
        value = page.get_attribute(".smk", "data-value")
        if value and (not seen or int(value) != seen[-1]):
            seen.append(int(value))
            assert page.locator('#board [data-legal][aria-label^="Pass"]').count() == 0
            if page.locator(".smk[data-phase=countdown]").count():  # still this round's countdown
                assert page.locator('#board [data-legal][aria-label^="Stop!"]').count() >= 1
                assert page.locator(".smk-timer[role=timer]").count() == 1
        time.sleep(0.05)
    assert len(seen) >= 3 and seen == sorted(seen, reverse=True), seen
