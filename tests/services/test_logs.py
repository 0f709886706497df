"""Every line a Souk process prints is a JSON object: its own logs (structlog) and its libraries' (FastStream)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest
import structlog

from services.runtime import logs


@pytest.fixture
def configured():
    """logs.configure for one test; the process-wide logging set-up is put back after it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield logs.configure
    root.handlers, root.level = handlers, level
    structlog.reset_defaults()


def test_a_librarys_error_is_a_json_line_with_its_traceback(configured, capfd):
    configured("info", "json")
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        logging.getLogger(logs.LIBRARIES).exception("Message fetch error")
    logging.getLogger("some.library").info("below warning: not shown")
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["event"] == "Message fetch error" and record["level"] == "error"
    assert record["logger"] == logs.LIBRARIES and "ZeroDivisionError: boom" in record["exception"]


def test_a_worker_prints_only_json_lines_from_start_to_stop(redis_url, tmp_path):
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_LOG_LEVEL": "info"}
    with open(tmp_path / "out", "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "services.cli", "projector"], env=env, stdout=out,
                                  stderr=subprocess.STDOUT)
        time.sleep(3)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=15) == 0
    lines = [line for line in (tmp_path / "out").read_text().splitlines() if line.strip()]
    assert lines and all(isinstance(json.loads(line), dict) for line in lines), lines
    assert json.loads(lines[0])["event"] == "worker_starting"


def fetch_error(created: float) -> None:
    """What FastStream logs on each failed read while Redis is away (about ten a second), at time ``created``."""
    record = logging.LogRecord(logs.LIBRARIES, logging.ERROR, __file__, 1, "Message fetch error", None,
                               (ConnectionError, ConnectionError("Connection refused"), None))
    record.created = created
    logging.getLogger(logs.LIBRARIES).handle(record)


def test_a_librarys_error_repeated_while_redis_is_away_is_one_line_then_one_summary_per_window(configured, capfd):
    configured("info", "json")
    for i in range(100):  # ten seconds of FastStream retrying every 0.1 s
        fetch_error(1000.0 + i / 10)
    lines = [json.loads(line) for line in capfd.readouterr().err.strip().splitlines()]
    assert len(lines) == 1 and "Connection refused" in lines[0]["exception"]
    fetch_error(1000.0 + logs.REPEATS_WINDOW_S + 1)  # the next one after the window says how many were held back
    [summary] = [json.loads(line) for line in capfd.readouterr().err.strip().splitlines()]
    assert summary["event"] == "Message fetch error" and summary["repeated"] == 99
    logging.getLogger(logs.LIBRARIES).error("another error")  # another message is not held back
    assert json.loads(capfd.readouterr().err)["event"] == "another error"
