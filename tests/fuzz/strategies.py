"""Hypothesis strategies for command bodies, built from the games' msgspec types (``msgspec.inspect``).

``command_body(game, legal)`` draws the JSON bytes of a command for ``game``: a valid-shaped one (every field a
value of its declared type), one of ``legal`` as it is or with one field changed, or a mutant (a field of the
wrong type, an integer out of any range, a missing or an extra field, another game's or an unknown tag, huge or
odd unicode strings, deep nesting, a body that is no object, or bytes that are no JSON at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import strategies as st

from contracts.table import TABLE_COMMANDS
from domain.kernel import Game, games

_encode = msgspec.json.encode
INT64 = 2**63 - 1
HUGE_INTS = (-1, -2, 2**31, -(2**31) - 1, INT64, INT64 + 1, -INT64 - 2, 2**64, 10**40, -(10**40))
# Strings a game's commands hold (shop names, goods kinds, ...): drawn often, so valid-shaped commands are legal
# now and then, not only random text.
_ODD_TEXT = ("", " ", "\u0000", "\u202e", "\U0001f42b", "é" * 3, "a" * 10_000, "\ud7ff\ue000", "'; DROP", "<script>")


def _strings(game: Game) -> tuple[str, ...]:
    """Every string value of the commands a few seeded playouts offered (harvested once per game)."""
    return _harvest(game.name)[0]


def _ints(game: Game) -> tuple[int, ...]:
    return _harvest(game.name)[1]


_HARVEST: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {}


def _harvest(name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    if name not in _HARVEST:
        game = games()[name]
        strings: set[str] = set()
        ints: set[int] = set()

        def collect(value: Any) -> None:
            if isinstance(value, str):
                strings.add(value)
            elif isinstance(value, int) and not isinstance(value, bool):
                ints.add(value)
            elif isinstance(value, dict):
                for item in value.values():
                    collect(item)
            elif isinstance(value, list):
                for item in value:
                    collect(item)

        for seats in (game.min_seats, game.max_seats):
            for command in _legal_along(game, seats):
                collect(msgspec.to_builtins(command))
        _HARVEST[name] = (tuple(sorted(s for s in strings if not s.startswith(f"{name}."))), tuple(sorted(ints)))
    return _HARVEST[name]


def _legal_along(game: Game, seats: int) -> list[Any]:
    """The legal commands offered along one seeded random game (every 3rd state)."""
    import random

    from domain import table as tbl
    from domain.chance import Chance
    from tests.domain.harness import start_table, token_hash

    rng = random.Random(seats)
    table, _ = start_table(game, seats, seed=b"harvest")
    offered: list[Any] = []
    for n in range(5000):
        if table.status != tbl.PLAYING:
            break
        seat = rng.choice(tbl.flow(table).awaiting)
        legal = list(game.legal_commands(table.state, seat))
        if n % 3 == 0:
            offered += legal
        for event in tbl.decide(table, seat, token_hash(seat), rng.choice(legal), Chance(b"harvest", table.version)):
            table = tbl.evolve(table, event)
    return offered


# --- values of a msgspec type --------------------------------------------------------------------------------


def valid_shaped(t: msgspec.inspect.Type, game: Game) -> st.SearchStrategy[Any]:
    """A value of the declared type (within its declared constraints), often one the game uses."""
    if isinstance(t, msgspec.inspect.IntType):
        low = t.ge if t.ge is not None else (t.gt + 1 if t.gt is not None else None)
        high = t.le if t.le is not None else (t.lt - 1 if t.lt is not None else None)
        known = [i for i in _ints(game) if (low is None or i >= low) and (high is None or i <= high)]
        choices = [st.integers(low if low is not None else -(2**63), high if high is not None else INT64)]
        choices.append(st.integers(max(low or -3, -3), min(high if high is not None else 12, 12)))
        if known:
            choices.append(st.sampled_from(known))
        return st.one_of(choices)
    if isinstance(t, msgspec.inspect.StrType):
        return st.one_of(st.sampled_from(_strings(game) or ("",)), st.text(max_size=20))
    if isinstance(t, msgspec.inspect.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, msgspec.inspect.BoolType):
        return st.booleans()
    if isinstance(t, msgspec.inspect.NoneType):
        return st.none()
    if isinstance(t, msgspec.inspect.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(t, msgspec.inspect.UnionType):
        return st.one_of([valid_shaped(arm, game) for arm in t.types])
    if isinstance(t, msgspec.inspect.Metadata):
        return valid_shaped(t.type, game)
    if isinstance(t, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)):
        return st.lists(valid_shaped(t.item_type, game), max_size=4)
    if isinstance(t, msgspec.inspect.DictType):
        return st.dictionaries(st.text(max_size=8), json_values(), max_size=3)
    return json_values()


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value: odd scalars, unicode, huge numbers, small nested containers."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.sampled_from(HUGE_INTS),
        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30), st.sampled_from(_ODD_TEXT),
    )
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                        max_leaves=6)


def wrong_type(t: msgspec.inspect.Type) -> st.SearchStrategy[Any]:
    """A JSON value of another type than ``t`` accepts (or an out-of-range integer): the decoder must refuse it,
    or the rules must."""
    if isinstance(t, msgspec.inspect.IntType):
        return st.one_of(st.sampled_from(HUGE_INTS), st.text(max_size=5), st.floats(allow_nan=False),
                         st.sampled_from(["3", 3.0, 3.5, True, None, [3], {"v": 3}]))
    return st.one_of(json_values(), st.sampled_from(HUGE_INTS))


def fields_of(command_type: type) -> tuple[msgspec.inspect.StructType, tuple[msgspec.inspect.Field, ...]]:
    info = msgspec.inspect.type_info(command_type)
    return info, info.fields


@st.composite
def valid_shaped_command(draw, game: Game, types: Sequence[type]) -> dict[str, Any]:
    command_type = draw(st.sampled_from(list(types)))
    info, fields = fields_of(command_type)
    body: dict[str, Any] = {info.tag_field: info.tag}
    for field in fields:
        if field.required or draw(st.booleans()):
            body[field.encode_name] = draw(valid_shaped(field.type, game))
    return body


@st.composite
def mutated(draw, game: Game, base: dict[str, Any]) -> Any:
    """``base`` (a command's JSON object) with one thing changed."""
    body = dict(base)
    tag = body.get("type")
    command_type = next((c for c in game.command_types if msgspec.inspect.type_info(c).tag == tag), None)
    fields = fields_of(command_type)[1] if command_type is not None else ()
    kind = draw(st.sampled_from(["field", "wrong_type", "drop", "extra", "tag", "shape", "unicode"]))
    if kind == "field" and fields:
        field = draw(st.sampled_from(fields))
        body[field.encode_name] = draw(valid_shaped(field.type, game))
    elif kind == "wrong_type" and fields:
        field = draw(st.sampled_from(fields))
        body[field.encode_name] = draw(wrong_type(field.type))
    elif kind == "drop" and len(body) > 1:
        body.pop(draw(st.sampled_from(sorted(body))))
    elif kind == "extra":
        body[draw(st.one_of(st.sampled_from(["extra", "seat", "token_hash", "__proto__"]), st.text(max_size=8)))] = \
            draw(json_values())
    elif kind == "tag":
        others = [msgspec.inspect.type_info(c).tag for g in games().values() for c in g.command_types]
        others += [msgspec.inspect.type_info(c).tag for c in TABLE_COMMANDS]
        body["type"] = draw(st.one_of(st.sampled_from(others), st.sampled_from(
            ["", "samarkand", "table.GameEnded", "samarkand.GameScored", "yspahan.TurnEnded", tag.upper() if tag else "X"]),
            st.text(max_size=12), wrong_type(msgspec.inspect.StrType())))
    elif kind == "shape":
        return draw(st.one_of(json_values(), st.just([body]), st.just([]), st.just(None)))
    else:
        key = draw(st.sampled_from(sorted(body)))
        body[key] = draw(st.one_of(st.sampled_from(_ODD_TEXT), st.text(min_size=1, max_size=40)))
    return body


# Raw bodies that are not JSON, or JSON no decoder should be fed without limits.
RAW_BODIES = (
    b"", b"{", b"}", b"nul", b"\xff\xfe\x00", b'{"type": "samarkand.Pass"', b'{"type": "\\ud800"}',
    b'{"type": "samarkand.Pass", "type": "yspahan.EndTurn"}', b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000, b'{"type": 1e999}', b'{"type": "samarkand.ChooseCard", "value": 1e400}',
    b'{"type": "samarkand.ChooseCard", "value": 123456789012345678901234567890}', b"\"" + b"x" * 70_000 + b"\"",
)


def command_body(game: Game, legal: Sequence[Any]) -> st.SearchStrategy[bytes]:
    """The bytes of a command body for ``game`` (see the module's docstring)."""
    legal_json = [msgspec.to_builtins(c) for c in legal]
    own = list(game.command_types)
    table = list(TABLE_COMMANDS)
    choices = [
        valid_shaped_command(game, own).map(_encode),
        valid_shaped_command(game, table).map(_encode),
        valid_shaped_command(game, own).flatmap(lambda b: mutated(game, b)).map(_encode),
        st.sampled_from(RAW_BODIES),
    ]
    if legal_json:
        choices += [st.sampled_from(legal_json).map(_encode),
                    st.sampled_from(legal_json).flatmap(lambda b: mutated(game, b)).map(_encode)]
    return st.one_of(choices)
