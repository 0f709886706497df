"""Text people type that others see: players' names and games' titles (pure).

Frontends render names and titles beside the board, so they must look like what they are:

- normalised to NFC (``e`` + U+0301 becomes ``é``), surrounding whitespace removed;
- refused when they hold a control character (C0, DEL, C1: NUL, tab, newline, escape...), a format character
  (Unicode category Cf: the bidi marks, embeddings, overrides and isolates U+200E, U+200F, U+061C,
  U+202A–U+202E, U+2066–U+2069; zero-width spaces U+200B, U+2060, U+FEFF; the soft hyphen; tag characters...),
  a line or paragraph separator, a surrogate, a private-use code point or a noncharacter, or a character that
  renders blank (the Hangul fillers, the combining grapheme joiner, the braille blank...). The zero-width
  joiner and non-joiner (U+200D, U+200C) are kept between two visible characters (Persian and Indic spelling,
  emoji sequences), refused elsewhere;
- counted in code points once normalised and trimmed: a name has 1 to 60, a title 1 to 200.

Everything else is kept as sent, in any script: ``<script>`` is a valid name, and escaping it is the
frontend's job.
"""

from __future__ import annotations

import unicodedata

from domain.kernel import RuleViolation

NAME_MAX = 60
TITLE_MAX = 200

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_JOINERS = frozenset("\u200c\u200d")
_BLANK = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")  # visible nowhere, yet not Cf


def name(text: str) -> str:
    """A player's name as stored, or ``bad_name``."""
    return _clean(text, NAME_MAX, "bad_name", "a player's name")


def title(text: str) -> str:
    """A game's title as stored, or ``bad_title``."""
    return _clean(text, TITLE_MAX, "bad_title", "the title")


def _clean(text: str, longest: int, code: str, what: str) -> str:
    text = unicodedata.normalize("NFC", text)
    for i, char in enumerate(text):
        if char in _JOINERS:
            if 0 < i < len(text) - 1 and _visible(text[i - 1]) and _visible(text[i + 1]):
                continue
            raise RuleViolation(code, f"{what} may hold {_describe(char)} only between two visible characters")
        if _refused(char):
            raise RuleViolation(code, f"{what} may not hold {_describe(char)}: control, format and invisible "
                                      "characters are refused")
    text = text.strip()
    if not 1 <= len(text) <= longest:
        raise RuleViolation(code, f"{what} must have 1 to {longest} characters")
    return text


def _refused(char: str) -> bool:
    return unicodedata.category(char) in _REFUSED_CATEGORIES or char in _BLANK or _noncharacter(char)


def _noncharacter(char: str) -> bool:
    point = ord(char)
    return 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE


def _visible(char: str) -> bool:
    return not char.isspace() and char not in _JOINERS and not _refused(char)


def _describe(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"
