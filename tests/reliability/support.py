"""What the short forms of `souk chaos` share (tests/reliability/test_chaos.py, test_chaos_on_cluster.py)."""

from __future__ import annotations

from services.cli.main import run
from services.reliability.chaos import Config, run_chaos, summary


def short_form(request, config: Config, name: str) -> dict:
    """One chaos run for a test module, its figures printed as it ends (pytest's capture set aside, the seed first:
    ``SOUK_CHAOS_SEED`` runs it again). Under xdist a worker's print does not reach the log: a failing check
    carries them in its report instead (tests/reliability/conftest.py)."""
    result = run(run_chaos(config))
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n--- {name}, short form (seed {result['seed']}):\n{summary(result)}")
    return result
