"""The Istanbul kernel's speed-ups (payments and choices built without a Counter or a dict a combination, the
choices of the last state remembered for decide's check) change nothing of what the bots compute: with the same
seeds and an iteration cap (no clock), ``mcts`` and ``greedy`` play exactly the commands recorded with the code
before them (tests/bots/istanbul_record.py)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bots.istanbul_record import SEEDS, play

RECORDED = json.loads((Path(__file__).parent / "data" / "istanbul_choices.json").read_text())


@pytest.mark.parametrize("seed", SEEDS)
def test_istanbul_same_choices(seed: int) -> None:
    assert json.loads(json.dumps(play(seed))) == RECORDED[str(seed)]


def _reference_payments(available, hand, need):
    """``rules.payments`` as it was before its speed-up (commit 4fd0702), kept to compare with."""
    from collections import Counter

    from domain.istanbul import data
    from domain.istanbul.rules import GOOD_INDEX

    def coverage(cards):
        supply: Counter = Counter()
        for card in cards:
            for g in data.face_goods(card):
                supply[g] += 1
        return sum(min(n, supply[g]) for g, n in need.items())

    counts = Counter(card for card in hand if any(g in need for g in data.face_goods(card)))
    faces = sorted(counts)
    total = sum(need.values())
    out = []

    def rec(i, chosen):
        if i == len(faces):
            covered = coverage(chosen)
            for card in set(chosen):
                rest = list(chosen)
                rest.remove(card)
                if coverage(rest) >= covered:
                    return
            supply: Counter = Counter()
            for card in chosen:
                for g in data.face_goods(card):
                    supply[g] += 1
            if all(available[GOOD_INDEX[g]] >= n - min(n, supply[g]) for g, n in need.items()):
                out.append(tuple(sorted(chosen)))
            return
        for k in range(counts[faces[i]] + 1):
            if len(chosen) + k > total:
                break
            rec(i + 1, chosen + [faces[i]] * k)

    rec(0, [])
    return out


def test_payments_same_as_before() -> None:
    """The faster ``payments`` lists the same ways to pay, in the same order, as the code before it, over hands,
    boxes and needs drawn at random (a palace's 4 to 7 goods, one to three of a type, 1 to 3 of a choice)."""
    import random
    from collections import Counter

    from domain.istanbul import data
    from domain.istanbul.rules import payments

    rng = random.Random(19)
    tried = paid = 0
    for _ in range(3000):
        hand = sorted(rng.sample(data.GOODS_CARDS, rng.randint(0, 8)))
        available = tuple(rng.randint(0, 3) for _ in data.GOODS)
        need = Counter(rng.choice(data.GOODS) for _ in range(rng.choice((1, 2, 3, 4, 5, 6, 7))))
        expected = _reference_payments(available, hand, need)
        assert payments(available, hand, need) == expected, (available, hand, need)
        tried += 1
        paid += bool(expected)
    assert paid > tried // 4  # most draws can be paid some way: the comparison is not of empty lists only
