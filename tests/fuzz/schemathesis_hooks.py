"""Schemathesis hooks for Souk's gateway (loaded by the CLI through ``SCHEMATHESIS_HOOKS``; see test_schemathesis.py).

- ``SeatToken``: seat endpoints get the seat's real token when the game and seat are ones whose token is known:
  the tokens of the games the test prepared (``SOUK_FUZZ_TOKENS``, a JSON file ``{game_id: [token, ...]}``) and
  of every seat Schemathesis itself took (``POST /games/{game_id}/seats`` answered 201), so generated and linked
  requests reach the rules, not only the token check.
- ``error_is_code_and_message``: every error (4xx or 5xx) is JSON ``{"code", "message"}``, two non-empty
  strings and nothing else.
- ``min_version`` in range is made small (see ``map_query``);
- the answers' statuses are counted and written to ``SOUK_FUZZ_STATS`` (JSON) when the run ends.
"""

from __future__ import annotations

import atexit
import collections
import json
import os

import schemathesis

TOKENS: dict[tuple[str, int], str] = {}
STATS: collections.Counter[str] = collections.Counter()

if os.environ.get("SOUK_FUZZ_TOKENS"):
    with open(os.environ["SOUK_FUZZ_TOKENS"]) as file:
        for game_id, tokens in json.load(file).items():
            TOKENS.update({(game_id, seat): token for seat, token in enumerate(tokens)})


def _seat(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


@schemathesis.auth(refresh_interval=None)
class SeatToken:
    def get(self, case, context):
        return TOKENS

    def set(self, case, data, context) -> None:
        params = case.path_parameters or {}
        token = data.get((str(params.get("game_id")), _seat(params.get("seat"))))
        if token is not None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


@schemathesis.hook
def map_query(context, query):
    """``min_version`` above a game's version waits 3 s for it (a long-poll, as documented): in-range values are
    folded to small ones (mostly reached already), so the run is not spent waiting; 0, negative and huge values
    (the edges) go as generated."""
    value = (query or {}).get("min_version")
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**62:
        query = {**query, "min_version": value % 8}
    return query


@schemathesis.hook
def after_call(context, case, response) -> None:
    STATS["requests"] += 1
    STATS[str(response.status_code)] += 1
    if response.status_code == 201 and case.method.upper() == "POST" and case.operation.path == "/games/{game_id}/seats":
        joined = response.json()
        TOKENS[(joined["game_id"], joined["seat"])] = joined["token"]


@schemathesis.check
def error_is_code_and_message(ctx, response, case) -> None:
    """Every error is JSON ``{"code", "message"}`` with a stable, non-empty code."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"a {response.status_code} whose body is not JSON: {response.content[:200]!r}") from None
    if not isinstance(body, dict) or set(body) != {"code", "message"}:
        raise AssertionError(f"a {response.status_code} whose body is not {{code, message}}: {body!r:.300}")
    if not (isinstance(body["code"], str) and body["code"] and isinstance(body["message"], str) and body["message"]):
        raise AssertionError(f"a {response.status_code} with an empty or non-string code or message: {body!r:.300}")


@atexit.register
def _write_stats() -> None:
    path = os.environ.get("SOUK_FUZZ_STATS")
    if path:
        with open(path, "w") as file:
            json.dump(dict(STATS), file)
