"""A store's refusal is answered the same on every path of the gateway (services/gateway/errors.py): the routes' and
the fast path's (``crash_answer``) and a WebSocket's (``answer_of``) give 503 ``store_unavailable`` with its
Retry-After, and each logs the condition once (a socket's was not logged)."""

from __future__ import annotations

from redis.exceptions import OutOfMemoryError
from structlog.testing import capture_logs

from services.gateway.errors import ApiError, answer_of, crash_answer


def test_a_store_refusal_is_answered_and_logged_alike_by_a_route_and_by_a_socket():
    refused = OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
    answers = []
    for answer in (crash_answer, answer_of):
        with capture_logs() as logs:
            answers.append(answer(refused))
        assert [(e["event"], e["condition"], e["log_level"]) for e in logs] == [
            ("store_unavailable", "out_of_memory", "warning")], answer.__name__
    route, socket = answers
    assert (route.status_code, route.code, route.message, route.headers) == (
        socket.status_code, socket.code, socket.message, socket.headers)
    assert route.status_code == 503 and route.code == "store_unavailable" and route.headers["Retry-After"]


def test_a_socket_answers_an_api_error_as_it_is_and_nothing_for_a_bug():
    refused = ApiError(404, "game_not_found", "no such game")
    assert answer_of(refused) is refused
    with capture_logs() as logs:
        assert answer_of(KeyError("a bug")) is None
    assert logs == []
