"""The fuzzers' fixtures: a real `souk serve` against the test Redis (tests/e2e's)."""

from __future__ import annotations

from tests.e2e.conftest import souk_env, souk_url  # noqa: F401 - fixtures shared with the end-to-end tests
