"""How long the fuzzers run: a CI run of about a minute for all of them, unless ``SOUK_FUZZ_EXAMPLES`` is set.

``SOUK_FUZZ_EXAMPLES=N`` runs each fuzzer N times longer, and lets Hypothesis draw at random instead of from
its fixed (derandomized) sequence, so that every long run explores new inputs."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALE = int(os.environ.get("SOUK_FUZZ_EXAMPLES", "0") or 0)
DERANDOMIZE = not SCALE


def examples(default: int) -> int:
    return default * SCALE if SCALE else default


def state_machine(default_examples: int, steps: int) -> settings:
    """The Hypothesis settings of a fuzzer's state machine: ``default_examples`` runs (times SOUK_FUZZ_EXAMPLES)
    of ``steps`` steps, no deadline, no example database, every health check off (they run real servers)."""
    return settings(max_examples=examples(default_examples), stateful_step_count=steps, deadline=None,
                    database=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck))
