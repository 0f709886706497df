"""Istanbul: Choose & Write's board (clients/web/src/boards/istanbul.ts) in a real browser, against a real
`souk serve` on the test Redis.

The issue's test: two browser contexts join the seats of one game through the table page and play it to the end
by clicking the board's legal commands (and pressing Enter on them), each page checked against its seat's view
over HTTP (the same legal commands, its own cards only, inside data-secret); a reload in the middle rejoins and
catches up; a spectator follows. It takes the screenshots in docs/screenshots. The solo game's board (its
discard to use, its challenges at the end) is drawn alone: the page imports the board's module and renders the
seat's views through ``board.render``, as the shell does.
"""

from __future__ import annotations

import random
import secrets
import time

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.shell import WHOLE_GAMES, GameOverHttp, finish_over_http, render_board, screenshot
from tests.browser.shell import board_buttons as buttons




class Game(GameOverHttp):
    """An Istanbul game over HTTP: its seats' tokens, their views and legal commands, random play."""

    def __init__(self, url: str, seats: int, names: list[str], join: bool = True) -> None:
        """A new game of ``seats``; ``join``: its seats joined over HTTP by ``names`` (else by the test's pages,
        whose tokens it then sets in ``tokens``)."""
        super().__init__(url, names)
        self.create({"game": "istanbul", "title": "Choose & Write", "seats": seats})
        for name in names if join else ():
            self.join(name, secrets.token_hex(32))


def render(page, table: dict, names: list[str]) -> None:
    assert render_board(page, "istanbul", table, names) == "Istanbul: Choose & Write"


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
    assert len(set(labels)) == len(labels), labels
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


def shoot(page, name: str) -> None:
    screenshot(page, name, full_page=True)


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
                assert page.locator("#app .ist-solo .ist-challenges li").count() == 14
                solo_seen = True
            version = game.send(0, rng.choice(table["legal"]), version)
        render(page, table, game.names)
        assert page.locator("#app .ist-challenges li").count() == 14
        met = page.locator("#app .ist-challenges li.ist-met").count()
        assert met == len(table["view"]["challenges"])
        assert solo_seen
    finally:
        game.close()


# --- the whole game through the page (the shell's table page around the board) ---------------------------------

def join_through_the_page(open_page, game_id: str, seat: int, name: str):
    page = open_page(f"/#/games/{game_id}", DESKTOP)
    page.fill('input[name="player-name"]', name)
    page.click(f'button[data-join-seat="{seat}"]')
    page.wait_for_selector(f'#table[data-seat="{seat}"]')
    return page


def token_of(page, game_id: str) -> str:
    return page.evaluate("id => JSON.parse(localStorage.getItem('souk.seats'))[id].token", game_id)


def page_at(page, version: int) -> None:
    """Waits until the page has drawn ``version`` (or a later one)."""
    page.wait_for_function("v => Number(document.querySelector('#table')?.dataset.version) >= v", arg=version,
                           timeout=15_000)


def ids(page, selector: str, attribute: str) -> list[str]:
    return sorted(page.eval_on_selector_all(selector, f"els => els.map(e => e.getAttribute('{attribute}'))"))


def check_secrets(page, own: dict, other: dict) -> None:
    """The page shows this seat's cards (inside data-secret) and no card the view hides from it: location cards
    are its hand's or face up, guild and goods cards only its own; the other seat's hand (its location and guild
    cards, each one of a kind) is not on it."""
    theirs = other["view"]["you"]
    shown = set(ids(page, "#table [data-card]", "data-card"))
    assert not shown & {str(c) for c in theirs["hand"]}
    assert not set(ids(page, "#table [data-guild]", "data-guild")) & {str(c) for c in theirs["guild_cards"]}
    view = own["view"]
    you = view["you"]
    assert ids(page, "#table [data-secret] [data-card]", "data-card") == sorted(str(c) for c in you["hand"])
    public = {str(c) for c in view["display"]} | ({str(view["played"])} if view["played"] is not None else set())
    assert set(ids(page, "#table [data-card]", "data-card")) <= public | {str(c) for c in you["hand"]}
    assert ids(page, "#table [data-guild]", "data-guild") == sorted(str(c) for c in you["guild_cards"] + you["keep"])
    assert ids(page, "#table [data-secret] [data-guild]", "data-guild") == ids(page, "#table [data-guild]", "data-guild")
    assert ids(page, "#table [data-goods-card]", "data-goods-card") == sorted(you["goods_cards"])
    assert ids(page, "#table [data-secret] [data-goods-card]", "data-goods-card") == sorted(you["goods_cards"])


def shoot_board(page) -> None:
    """The table page with Istanbul's board, at a desktop's width and at a phone's (docs/screenshots)."""
    for name, viewport in (("istanbul-desktop.png", DESKTOP), ("istanbul-phone.png", PHONE)):
        page.set_viewport_size(viewport)
        shoot(page, name)
        # nothing of the board sticks out sideways (at 390 px too)
        assert page.evaluate("(b => b.scrollWidth <= b.clientWidth + 1)(document.getElementById('board'))"), name
    page.set_viewport_size(DESKTOP)


def test_two_browsers_play_a_game_to_the_end_while_a_spectator_follows(open_page, souk_url):
    """Two seats (Istanbul's shortest game with an opponent: about 115 commands, a minute or so), joined through
    the game's page in two browser contexts; random legal commands clicked on the board (random play ends an
    Istanbul game: the display or the deck runs out); each page checked against its seat's view over HTTP (the
    same legal commands, its own cards only); seat 1's page reloaded in the middle rejoins with its stored token
    and catches up; a spectator's page follows to the result. CI's short form clicks the first fifty-odd commands
    (the reload, the screenshots and the spectator's check fall in them), then the seats finish the game over HTTP
    while the pages follow it to the result; ``SOUK_BROWSER_GAMES=whole`` clicks every command."""
    names = ["Ayla", "Baran"]
    game = Game(souk_url, 2, names, join=False)
    pages = [join_through_the_page(open_page, game.id, seat, name) for seat, name in enumerate(names)]
    game.tokens = [token_of(page, game.id) for page in pages]
    spectator = open_page(f"/#/games/{game.id}", PHONE)
    spectator.wait_for_selector('#table[data-seat="spectator"]')
    rng = random.Random(7)
    version, played, shot = 0, 0, False
    try:
        while True:
            table = game.view(None, version)
            if table["status"] != "playing":
                break
            version = table["version"]
            if not WHOLE_GAMES and played > 50 and shot:  # CI's short form: the seats finish over HTTP
                version = finish_over_http(souk_url, game.id, game.tokens, rng)["version"]
                break
            seat = rng.choice(table["flow"]["awaiting"])
            page = pages[seat]
            page_at(page, version)
            own = game.view(seat, version)
            assert page.locator("#table [data-legal]").count() == len(own["legal"])
            if played % 10 == 0:
                check_secrets(page, own, game.view(1 - seat, version))
            if (not shot and own["view"]["phase"] == "act" and own["view"]["played"] is not None
                    and own["view"]["round"] >= 4 and len(own["legal"]) > 8):
                group = page.locator("#board .ist-answer-group").last  # pointing at a place's answers
                group.hover()
                place = group.get_attribute("data-place")
                assert page.locator(f'#board .ist-own .ist-place[data-place="{place}"].ist-lit').count() == 1
                shoot_board(page)
                shot = True
            labels = page.eval_on_selector_all("#table [data-legal]", "els => els.map(e => e.getAttribute('aria-label'))")
            assert all(label and "{" not in label for label in labels), labels
            assert len(set(labels)) == len(labels), labels  # each command told apart from the others
            page.wait_for_selector("#table:not([aria-busy])")  # the page sends one command at a time
            pick = f'#table [data-legal="{rng.randrange(len(own["legal"]))}"]'
            if played % 4 == 3:  # by keyboard now and then
                page.focus(pick)
                page.keyboard.press("Enter")
            else:
                page.click(pick)
            played += 1
            deadline = time.monotonic() + 15
            while game.view(None, version + 1)["version"] <= version:
                assert time.monotonic() < deadline, f"the click on seat {seat}'s page played nothing"
            if played == 40:
                pages[1].reload()
                pages[1].wait_for_selector('#table[data-seat="1"]')
            if played == 45:
                page_at(spectator, version)
                assert spectator.locator("#table [data-legal]").count() == 0
                assert spectator.locator("#table [data-secret]").count() == 0
        for seat, page in enumerate(pages):
            page_at(page, version)
            page.wait_for_selector("#result")
            assert page.locator("#table [data-legal]").count() == 0
            check_secrets(page, game.view(seat), game.view(1 - seat))
        page_at(spectator, version)
        spectator.wait_for_selector("#result")
        assert spectator.locator("#table .ist-final").count() == 1
        for at in (1, 3, version // 2):  # time travel: the board draws past views (before the setup too)
            spectator.evaluate("hash => { location.hash = hash; }", f"#/games/{game.id}?at={at}")
            spectator.wait_for_function(  # a version inside a command's events shows that command's start
                "at => { const t = document.querySelector('#table');"
                " return t.dataset.at === String(at) && Number(t.dataset.version) <= at; }", arg=at)
            assert spectator.locator("#table [data-legal]").count() == 0
        assert spectator.locator("#board .ist-sheet").count() == 2
        assert played > 50 and shot
    finally:
        game.close()
