"""How long the fuzzers run: a CI run of about a minute for all of them, unless ``SOUK_FUZZ_EXAMPLES`` is set.

``SOUK_FUZZ_EXAMPLES=N`` runs each fuzzer N times longer, and lets Hypothesis draw at random instead of from
its fixed (derandomized) sequence, so that every long run explores new inputs."""

from __future__ import annotations

import os

SCALE = int(os.environ.get("SOUK_FUZZ_EXAMPLES", "0") or 0)
DERANDOMIZE = not SCALE


def examples(default: int) -> int:
    return default * SCALE if SCALE else default
