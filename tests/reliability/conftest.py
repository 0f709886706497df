"""A failing test of a chaos run's ``figures`` carries the run's summary and fault log in its report: the short
form prints them as it ends (tests/reliability/support.py), but under xdist a worker's print never reaches the CI
log, and a failure read there showed only its assertion (no seed, no fault schedule)."""

from __future__ import annotations

import json

import pytest

from services.reliability.chaos import summary


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    figures = getattr(item, "funcargs", {}).get("figures")
    if report.when == "call" and report.failed and isinstance(figures, dict):
        faults = "\n".join(json.dumps(fault) for fault in figures.get("fault_log", []))
        report.sections.append(("souk chaos run", f"seed {figures.get('seed')}\n{summary(figures)}\n"
                                                  f"fault log:\n{faults}"))
