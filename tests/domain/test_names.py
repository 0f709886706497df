"""Players' names and games' titles: what the platform refuses, and what it stores (issue #8, item 8).

Frontends render names and titles beside the board, so a name must look like what it is: no control or format
characters (bidi overrides hide or reorder text), nothing invisible; the rest is stored as sent (escaping HTML is
the frontend's job)."""

from __future__ import annotations

import pytest

from contracts.table import CreateGame, GameCreated, JoinSeat, SeatJoined
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation

SEED = b"names-seed"


def decide(table, command):
    return tbl.decide(table, None, None, command, Chance(SEED, table.version))


def open_table():
    return tbl.fold(decide(tbl.EMPTY, CreateGame("samarkand", "t", 3)))


def joined_name(name: str) -> str:
    [event] = decide(open_table(), JoinSeat(name, "h0"))
    assert isinstance(event, SeatJoined)
    return event.name


def created_title(title: str) -> str:
    [event] = decide(tbl.EMPTY, CreateGame("samarkand", title, 3))
    assert isinstance(event, GameCreated)
    return event.title


def refused(command, table, code) -> str:
    with pytest.raises(RuleViolation) as info:
        decide(table, command)
    assert info.value.code == code and info.value.message
    return info.value.message


INVISIBLE_OR_CONTROL = [
    "\x00",  # NUL
    "\x07",  # BEL
    "\t",
    "\n",
    "\r",
    "\x1b",  # ESC: terminal escape sequences in logs
    "\x7f",  # DEL
    "\x85",  # NEL (C1)
    "\x9b",  # CSI (C1)
    "\u00ad",  # soft hyphen
    "\u061c",  # Arabic letter mark
    "\u200b",  # zero width space
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\u202a",  # left-to-right embedding
    "\u202b",  # right-to-left embedding
    "\u202c",  # pop directional formatting
    "\u202d",  # left-to-right override
    "\u202e",  # right-to-left override
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\u2060",  # word joiner
    "\u2066",  # left-to-right isolate
    "\u2067",  # right-to-left isolate
    "\u2068",  # first strong isolate
    "\u2069",  # pop directional isolate
    "\ufeff",  # zero width no-break space (BOM)
    "\ufff9",  # interlinear annotation anchor
    "\U000e0041",  # tag latin capital letter A: invisible text
    "\ue000",  # private use
    "\U000f0000",  # supplementary private use
    "\ufdd0",  # noncharacter
    "\uffff",  # noncharacter
    "\u3164",  # Hangul filler: renders blank
    "\u115f",  # Hangul choseong filler
    "\uffa0",  # halfwidth Hangul filler
    "\u034f",  # combining grapheme joiner
    "\u2800",  # braille blank
]


@pytest.mark.parametrize("char", INVISIBLE_OR_CONTROL, ids=lambda c: f"U+{ord(c):04X}")
def test_a_name_with_a_control_format_or_invisible_character_is_refused(char):
    table = open_table()
    for name in (f"Ali{char}Bea", f"{char}Ali", f"Ali{char}"):
        message = refused(JoinSeat(name, "h0"), table, "bad_name")
        assert f"U+{ord(char):04X}" in message  # the message names the character


@pytest.mark.parametrize("char", ["\x00", "\u202e", "\u2066", "\u200b", "\n", "\U000e0041", "\u3164"],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_a_title_with_a_control_format_or_invisible_character_is_refused(char):
    refused(CreateGame("samarkand", f"Friday{char}market", 3), tbl.EMPTY, "bad_title")


def test_a_bidi_override_cannot_disguise_a_name():
    # "Ali" + RLO + "gnp.exe" renders as "Aliexe.png"
    refused(JoinSeat("Ali\u202egnp.exe", "h0"), open_table(), "bad_name")


@pytest.mark.parametrize("name", ["", " ", "   ", "\u3000", "\u00a0", "\u200d", "\u200c"])
def test_a_blank_name_is_refused(name):
    refused(JoinSeat(name, "h0"), open_table(), "bad_name")


def test_a_blank_title_is_refused():
    refused(CreateGame("samarkand", " \u3000 ", 3), tbl.EMPTY, "bad_title")


def test_names_and_titles_are_stored_in_nfc_without_surrounding_spaces():
    assert joined_name("  Zoe\u0301  ") == "Zoé"  # e + combining acute -> é (U+00E9)
    assert joined_name("\u00a0Ali\u3000") == "Ali"
    assert created_title(" Cafe\u0301 du marche\u0301 ") == "Café du marché"
    assert joined_name("Ali  Bea") == "Ali  Bea"  # spaces inside are kept as sent


def test_markup_and_every_script_are_stored_as_sent():
    for name in ("<script>alert(1)</script>", "Robert'); DROP TABLE players;--", "&amp; \"quoted\"",
                 "Ægir Østergård", "Ἀλέξανδρος", "Мария", "محمد", "שרה", "李小龍", "さくら", "김민준",
                 "देवनागरी", "ஸ்ரீ", "Nguyễn Văn An", "Ali 🐪", "❤️ Bea", "🇫🇷 Cyr"):
        assert joined_name(name) == name
    assert created_title("<b>Friday</b> & Saturday") == "<b>Friday</b> & Saturday"


@pytest.mark.parametrize("name", ["می\u200cخواهم", "क्\u200dष", "👨\u200d👩\u200d👧", "🏳️\u200d🌈"])
def test_joiners_between_two_visible_characters_are_kept(name):
    # ZWNJ in Persian spelling, ZWJ in Indic conjuncts and emoji sequences
    assert joined_name(name) == name


@pytest.mark.parametrize("name", ["\u200dAli", "Ali\u200c", "Ali \u200d Bea", "Ali\u200d\u200dBea"])
def test_a_joiner_that_joins_nothing_is_refused(name):
    refused(JoinSeat(name, "h0"), open_table(), "bad_name")


def test_names_have_1_to_60_characters_and_titles_1_to_200_after_normalisation():
    assert joined_name("x" * 60) == "x" * 60
    refused(JoinSeat("x" * 61, "h0"), open_table(), "bad_name")
    assert joined_name("e\u0301" * 60) == "é" * 60  # 120 code points sent, 60 stored
    assert joined_name(" " + "x" * 60 + " ") == "x" * 60
    assert created_title("t" * 200) == "t" * 200
    refused(CreateGame("samarkand", "t" * 201, 3), tbl.EMPTY, "bad_title")
