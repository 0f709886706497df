"""The gateway's checks at the door (services/gateway/inputs.py), without a server: the nesting count, strict
decoding, and the bound on nesting measured against every game's deepest command and options."""

from __future__ import annotations

import msgspec
import msgspec.inspect as mi
import pytest

from contracts.api import MAX_BODY_DEPTH, CommandRequest, CreateGameRequest
from domain.kernel import games
from services.gateway.errors import ApiError
from services.gateway.inputs import decode, depth


@pytest.mark.parametrize(("text", "expected"), [
    (b"1", 0),
    (b"{}", 1),
    (b'{"a": [1, {"b": []}], "c": {}}', 4),
    (b"[" * 40 + b"]" * 40, MAX_BODY_DEPTH + 1),  # counting stops past the bound
    (b'{"a": "[[[[{{{{"}', 1),  # brackets inside strings do not count
    (b'{"a": "say \\"[[[[\\" twice", "b": [["\\\\"]]}', 3),  # nor escaped quotes end a string early
])
def test_depth_counts_nested_arrays_and_objects_outside_strings(text, expected):
    assert depth(text) == expected


def test_a_body_is_decoded_strictly_and_refused_with_a_clear_code():
    decoder = msgspec.json.Decoder(CreateGameRequest, strict=True)
    assert decode(b'{"game": "samarkand", "title": "t", "seats": 3}', decoder).seats == 3
    for raw, words in [(b'{"game": "samarkand", "title": "t", "seats": "3"}', "Expected `int`"),
                       (b'{"game": "samarkand", "title": "t", "seats": 3, "x": 1}', "unknown field"),
                       (b'{"game": "samarkand", "title": "\xff", "seats": 3}', "UTF-8"),
                       (b'{"game": ', "not JSON"),
                       (b'{"game": "samarkand", "title": "t", "seats": 3, "options": {"a": ' + b"[" * 40 + b"]" * 40
                        + b"}}", f"more than {MAX_BODY_DEPTH} deep")]:
        with pytest.raises(ApiError) as info:
            decode(raw, decoder)
        assert info.value.status_code == 400 and info.value.code == "bad_request" and words in info.value.message


def _nesting(t: mi.Type, seen: tuple = ()) -> float:
    """How deep a value of this type nests in JSON (infinite for Any or a recursive type)."""
    if isinstance(t, mi.StructType):
        if t.cls in seen:
            return float("inf")
        return 1 + max((_nesting(f.type, (*seen, t.cls)) for f in t.fields), default=0)
    if isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        return 1 + _nesting(t.item_type, seen)
    if isinstance(t, mi.TupleType):
        return 1 + max((_nesting(i, seen) for i in t.item_types), default=0)
    if isinstance(t, mi.DictType):
        return 1 + _nesting(t.value_type, seen)
    if isinstance(t, mi.UnionType):
        return max(_nesting(i, seen) for i in t.types)
    if isinstance(t, mi.AnyType):
        return float("inf")
    return 0


@pytest.mark.parametrize("game", sorted(games()))
def test_every_command_and_option_of_every_game_nests_well_within_the_bound(game):
    rules = games()[game]
    deepest_command = max(_nesting(mi.type_info(c)) for c in rules.command_types)
    options = _nesting(mi.type_info(rules.options_type))
    assert deepest_command + 1 <= MAX_BODY_DEPTH // 4  # + 1: the CommandRequest around it
    assert options + 1 <= MAX_BODY_DEPTH // 4  # + 1: the CreateGameRequest around them
    legal = msgspec.json.encode(CommandRequest("c", {"type": "x"}))
    assert depth(legal) == 2
