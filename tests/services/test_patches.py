"""The gateway's JSON Patch frames (services.gateway.fanout: ``diff``, ``step``; listeners.Follower): each patch,
applied by a library of its own (``jsonpatch``), gives the next view exactly; a socket is sent a patch only from the
view it was last sent, else the whole view."""

from __future__ import annotations

import json
import random

import jsonpatch
import msgspec
import pytest

from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from services.gateway import fanout
from services.gateway.listeners import Follower
from services.store.codec import encoder
from tests.domain.harness import start_table, token_hash


@pytest.mark.parametrize("before,after", [
    ({"a": 1, "b": [1, 2, 3]}, {"a": 2, "b": [1, 3], "c": None}),
    ([1, 2, 3, 4], [0, 1, 2, 3, 4, 5]),
    ([1, 2, 3, 4], [4]),
    ({"x": [{"k": 1}, {"k": 2}]}, {"x": [{"k": 1}, {"k": 3}, {"k": 2}]}),
    ({"t": True}, {"t": 1}),  # equal in Python, not in JSON
    ({"a/b": 1, "m~n": [1]}, {"a/b": 2, "m~n": []}),
    ({"v": 1}, [1]),
    ([], [[1], {"a": []}]),
])
def test_a_diff_applied_by_jsonpatch_gives_the_new_document(before, after):
    ops: list = []
    fanout.diff(before, after, "", ops)
    result = jsonpatch.apply_patch(before, ops)
    assert result == after and json.dumps(result) == json.dumps(after)


@pytest.mark.parametrize("name,seats", [("yspahan", 3), ("samarkand", 4), ("istanbul", 3), ("karawane", 2)])
def test_each_views_patch_gives_the_next_view_of_every_audience(name, seats):
    game, rng = get_game(name), random.Random(5)
    table, _ = start_table(game, seats, None, seed=b"patches!")
    steps: dict = {}
    last: dict = {}
    for _ in range(60):
        if table.status == tbl.OVER:
            break
        seat = rng.choice(tbl.flow(table).awaiting)
        command = rng.choice(list(game.legal_commands(table.state, seat)))
        for event in tbl.decide(table, seat, token_hash(seat), command, Chance(b"x" * 8, table.version)):
            table = tbl.evolve(table, event)
        for audience, view in tbl.views(table, "g").items():
            raw = encoder.encode(view)
            step = fanout.step(steps.get(audience), last.get(audience), view.version, raw)
            if audience in steps:
                assert step.base == steps[audience].n and step.n == step.base + 1
                if step.patch is not None:
                    frame = json.loads(step.patch)
                    assert (frame["from"], frame["version"]) == (steps[audience].version, view.version)
                    assert jsonpatch.apply_patch(json.loads(last[audience]), frame["patch"]) == json.loads(raw)
                    assert len(step.patch) < len(raw)
            steps[audience], last[audience] = step, raw


def test_a_follower_is_sent_a_patch_only_from_the_view_it_was_sent_last():
    views = [msgspec.json.encode({"version": v, "view": {"n": v, "pad": "x" * 200}}) for v in range(1, 5)]
    steps, previous, raw_before = [], None, None
    for v, raw in enumerate(views, start=1):
        previous = fanout.step(previous, raw_before, v, raw)
        steps.append(previous)
        raw_before = raw

    patching, plain = Follower(patches=True), Follower()
    sent: list = []
    for follower in (patching, plain):
        follower.offer(1, views[0].decode(), step=steps[0])
        sent.append(follower._choose(follower._text, follower._text_step))
        follower._text = None
    assert sent == [views[0].decode(), views[0].decode()]  # a whole view first
    patching.offer(2, views[1].decode(), step=steps[1])
    assert patching._choose(patching._text, patching._text_step) == steps[1].patch  # it was sent view 1: the patch from it
    patching.offer(3, views[2].decode(), step=steps[2])  # offered, never taken (a slow socket)...
    patching._text = None
    patching.offer(4, views[3].decode(), step=steps[3])  # ...so view 4 goes whole: its patch is from view 3
    assert patching._choose(patching._text, patching._text_step) == views[3].decode()
    plain.offer(2, views[1].decode(), step=steps[1])
    assert plain._choose(plain._text, plain._text_step) == views[1].decode()  # it did not ask for patches
