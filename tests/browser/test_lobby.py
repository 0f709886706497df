"""The lobby of the web client: the create form (the catalog's options, the table's clock and undo), the server's
refusals shown by it, the list with its filters and pages, and a phone's width."""

from __future__ import annotations

import httpx

from tests.browser.conftest import PHONE
from tests.browser.shell import create


def test_a_game_is_created_through_the_form_with_its_options_a_clock_and_an_undo_policy(open_page, souk_url):
    page = open_page("/")
    page.wait_for_selector("form#create select[name=game] option", state="attached")
    page.select_option("form#create select[name=game]", "yspahan")
    # the game's own options come from the catalog with their defaults
    assert page.input_value("form#create input[name=opt-cubes_per_player]") == "24"
    page.fill("form#create input[name=title]", "Tuesday's souk")
    page.fill("form#create input[name=seats]", "3")
    page.fill("form#create input[name=opt-gold_in_box]", "30")
    page.select_option("form#create select[name=opt-undo]", "with_consent")
    page.fill("form#create input[name=clock-per_decision]", "90")
    page.select_option("form#create select[name=clock-on_timeout]", "absent")
    page.click("form#create button[type=submit]")

    page.wait_for_selector("#table[data-seat='spectator'] button[data-join-seat='2']")
    game_id = page.get_attribute("#table", "data-game-id")
    assert page.locator("button[data-join-seat]").count() == 3
    created = httpx.get(f"{souk_url}/games/{game_id}/history").json()["entries"][0]["event"]
    assert (created["game"], created["title"], created["seats"]) == ("yspahan", "Tuesday's souk", 3)
    assert created["options"]["gold_in_box"] == 30 and created["undo"] == "with_consent"
    assert created["clock"]["per_decision"] == 90 and created["clock"]["on_timeout"] == "absent"


def test_a_refused_create_shows_the_servers_reason_by_the_form_and_creates_nothing(open_page, souk_url):
    page = open_page("/")
    open_page.allow_refusals(422)
    page.wait_for_selector("form#create select[name=game] option", state="attached")
    page.select_option("form#create select[name=game]", "yspahan")
    page.fill("form#create input[name=seats]", "9")
    page.click("form#create button[type=submit]")
    page.wait_for_selector("#create-error:not(:empty)")
    assert "bad_seat_count" in page.text_content("#create-error")
    assert page.locator("#table").count() == 0
    assert httpx.get(f"{souk_url}/games").json() == []


def test_the_lobby_lists_games_filters_them_by_game_and_status_and_pages(open_page, souk_url):
    for _ in range(21):
        create(souk_url, "yspahan", 2)
    samarkand = create(souk_url, "samarkand", 3)
    page = open_page("/")
    page.wait_for_selector("[data-game-id]")
    assert page.locator("[data-game-id]").count() == 20
    page.click("#more-games")
    page.wait_for_function("document.querySelectorAll('[data-game-id]').length === 22")
    assert page.locator("#more-games").count() == 0

    page.select_option("#filter-game", "samarkand")
    page.wait_for_function("document.querySelectorAll('[data-game-id]').length === 1")
    assert page.get_attribute("[data-game-id]", "data-game-id") == samarkand
    page.select_option("#filter-status", "playing")
    page.wait_for_selector("#games .empty")
    page.select_option("#filter-game", "")
    page.select_option("#filter-status", "open")
    page.wait_for_function("document.querySelectorAll('[data-game-id]').length === 20")

    page.click(f"[data-game-id='{samarkand}'] a.button")
    page.wait_for_selector(f"#table[data-game-id='{samarkand}'] button[data-join-seat='2']")
    assert page.locator("button[data-join-seat]").count() == 3


def test_the_lobby_fits_a_phones_width(open_page, souk_url):
    create(souk_url, "istanbul", 2)
    page = open_page("/", viewport=PHONE)
    page.wait_for_selector("[data-game-id]")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_private_game_is_joined_through_its_invitation_address(open_page, souk_url):
    page = open_page("/")
    page.wait_for_selector("form#create select[name=game] option", state="attached")
    page.select_option("form#create select[name=game]", "yspahan")
    page.fill("form#create input[name=seats]", "2")
    page.check("form#create input[name=private]")
    page.click("form#create button[type=submit]")
    page.wait_for_selector("button[data-join-seat='0']")
    address = page.url
    assert "?invite=" in address
    game_id = page.get_attribute("#table", "data-game-id")
    assert httpx.get(f"{souk_url}/games").json() == []  # never listed in the lobby
    take = open_page("/" + address.split("/", 3)[3])  # another browser at the shared address
    take.fill("input[name=player-name]", "Bea")
    take.click("button[data-join-seat='1']")
    take.wait_for_selector("#table[data-seat='1']")
    seats = httpx.get(f"{souk_url}/games/{game_id}").json()["seats"]
    assert seats[1]["name"] == "Bea"
