"""``GET /asyncapi.json``: an AsyncAPI 3.0 document of the WebSockets a client opens on the gateway.

Two channels, the spectator's (``/games/{game_id}/ws``) and a seat's (``/games/{game_id}/seats/{seat}/ws``,
with ``?token=``), each pushing ``TableView`` JSON text frames: the current view at once, then every newer one.
``?from=N`` (the last version the client saw) first sends the history entries it missed (``HistoryPage``
frames), then the current view: the reconnection contract. ``?since=N`` only skips the views it has. When a seat
connects or leaves, the view is pushed again: the same version, its ``presence`` changed. A refused socket
is accepted, then closed with 4000 + the HTTP status (``x-close-codes``). A seat's socket carries its commands too:
the client sends ``CommandFrame`` frames (the POST …/commands body with ``"type": "souk.Command"``), each answered
on the socket by a ``CommandAnswer`` (the POST's status and body), the operation ``receiveSeatCommand`` and its
reply. The payloads are typed from contracts/ as the OpenAPI document types them (every game's views and commands,
``services.gateway.openapi``).

It names no internal host: the only server is the gateway, as the client reached it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from contracts.api import CommandAnswer, CommandFrame
from contracts.readmodels import HistoryPage, TableView, ViewPatch
from domain.kernel import games
from services.gateway.openapi import REF, SEAT_COMMAND, wire_components

CLOSE_CODES = {
    "1000": "normal closure (the client left, or the gateway stops)",
    "1011": "the gateway failed (a store does not answer): reconnect with ?since= after a pause",
    "4400": "bad_request: the seat is not a seat number, or both from and since are given; bad_version: from is "
            "not a whole number from 0",
    "4401": "missing_token or bad_token: the seat's token is missing or not this seat's",
    "4404": "game_not_found: there is no such game",
    "4429": "rate_limited: the handshake is over the client's (or the seat token's) requests a second, as an HTTP "
            "request would be: reconnect after a pause",
}
SINCE = {"type": "integer", "minimum": -1, "description": (
    "The last version the client saw: views up to it are not sent again (the views only: the events in between "
    "are GET …/history?after=). Absent or -1: the current view first. Not with from.")}
FROM = {"type": "integer", "minimum": 0, "description": (
    "Reconnecting after a dropped socket: the last version the client saw. The socket first sends the history "
    "entries after it, as this audience's history shows them (HistoryPage frames, oldest first, up to 500 entries "
    "each; version: the view's that follows), then the current view (even when nothing was missed), then every "
    "newer view. Not with since.")}
PATCH = {"type": "string", "enum": ["1", "true"], "description": (
    "The client applies JSON Patch frames: after the first whole view, each view comes as the ViewPatch from the "
    "view this socket was sent last when it is smaller than the view, else whole.")}
GAME_ID = {"description": "The game's id (POST /games answers it)"}


@cache
def _components() -> dict[str, Any]:
    _, found = msgspec.json.schema_components([TableView, HistoryPage, ViewPatch, CommandFrame, CommandAnswer],
                                              ref_template=REF + "{name}")
    schemas = {**found, **wire_components(set(found))}
    table_view = schemas["TableView"]
    table_view["properties"]["view"] = {
        "oneOf": [{"$ref": f"{REF}{name}.View"} for name in sorted(games())] + [{"type": "null"}],
        "description": "The game's own view for this seat (its game's tagged View); null before the start"}
    table_view["properties"]["legal"] = {"type": "array", "items": {"$ref": REF + SEAT_COMMAND},
                                         "description": "The commands this seat may send now (POST them back, "
                                                        "or send them on the seat's socket)"}
    schemas["CommandFrame"]["properties"]["command"] = {"$ref": REF + SEAT_COMMAND,
                                                        "description": "One of the view's legal commands"}
    return {
        "schemas": {name: _asyncapi_schema(schema) for name, schema in sorted(schemas.items())},
        "messages": {"view": {
            "name": "view", "title": "A view of the game", "contentType": "application/json",
            "summary": "The game as this audience sees it now: one text frame per version, newest only (a slow "
                       "client skips versions it had no time to read; each view is whole); and the same version "
                       "again when a seat connects or leaves (its presence changed: render a frame whose version "
                       "is the one shown; skip only older ones)",
            "payload": {"$ref": REF + "TableView"}},
            "missed": {
                "name": "missed", "title": "History entries missed", "contentType": "application/json",
                "summary": "Only on a socket opened with ?from=V, before its first view: the history entries V < seq "
                           "<= the view's version, redacted as this audience's history is",
                "payload": {"$ref": REF + "HistoryPage"}},
            "patch": {
                "name": "patch", "title": "A view as a JSON Patch", "contentType": "application/json",
                "summary": "Only on a socket opened with ?patch=1, after a whole view: the RFC 6902 patch from the "
                           "view of version `from` this socket was sent last to the view of `version`; a client "
                           "that holds another view reconnects with ?from= (the view then comes whole)",
                "payload": {"$ref": REF + "ViewPatch"}},
            "command": {
                "name": "command", "title": "A command of the seat", "contentType": "application/json",
                "summary": "Sent by the client on a seat's socket: the body of POST /games/{game_id}/seats/{seat}/"
                           "commands with \"type\": \"souk.Command\"; the socket's token authorizes it as the "
                           "POST's Authorization does. Answered by one commandAnswer; frames are handled one at a "
                           "time, in the order sent. Its view comes as every view does (before or after the answer)",
                "payload": {"$ref": REF + "CommandFrame"}},
            "commandAnswer": {
                "name": "commandAnswer", "title": "The answer to a frame the client sent",
                "contentType": "application/json",
                "summary": "What the POST would have answered the same body: its status (200 accepted) and its body "
                           "(reply, or error: {code, message}; retry_after: its Retry-After). A frame that is no "
                           "command: 400 bad_frame; a command on a spectator's socket: 403 not_a_seat. The socket "
                           "stays open",
                "payload": {"$ref": REF + "CommandAnswer"}}},
    }


def _asyncapi_schema(schema: Any) -> Any:
    """The schema as AsyncAPI's Schema Object has it: a ``discriminator`` is the name of the property (a string),
    where OpenAPI's is an object (``propertyName`` and a ``mapping``, which AsyncAPI does not have: each ``oneOf``
    member names its tag in its ``type`` property, an ``enum`` of one). The official parser refuses the OpenAPI form."""
    if isinstance(schema, dict):
        return {key: value["propertyName"] if key == "discriminator" and isinstance(value, dict)
                else _asyncapi_schema(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_asyncapi_schema(item) for item in schema]
    return schema


def document(host: str, secure: bool = False) -> dict[str, Any]:
    """The document, its server the gateway as reached at ``host`` (``secure``: over TLS)."""
    messages = {"missed": {"$ref": "#/components/messages/missed"}, "view": {"$ref": "#/components/messages/view"},
                "patch": {"$ref": "#/components/messages/patch"},
                "command": {"$ref": "#/components/messages/command"},
                "commandAnswer": {"$ref": "#/components/messages/commandAnswer"}}
    close = {"x-close-codes": CLOSE_CODES}
    channels = {
        "spectatorView": {
            "address": "/games/{game_id}/ws", "title": "What a spectator sees",
            "description": "Opened by anyone. Pushes the spectator view at once and after every change, and "
                           "again (the same version) when a seat connects or leaves. A command sent on it is "
                           "answered 403 not_a_seat.",
            "parameters": {"game_id": GAME_ID}, "messages": messages,
            "bindings": {"ws": {"method": "GET", "bindingVersion": "0.1.0", "query": {
                "type": "object", "properties": {"from": FROM, "since": SINCE, "patch": PATCH}}}},
            **close,
        },
        "seatView": {
            "address": "/games/{game_id}/seats/{seat}/ws", "title": "What a seat sees",
            "description": "Opened with the seat's token (?token=, what POST /games/{game_id}/seats answered). "
                           "Pushes the seat's view (its secrets and legal commands included) at once and after "
                           "every change, and again (the same version) when a seat connects or leaves. While it is "
                           "open, the seat is connected (presence), since it opened. A missing or bad token: the "
                           "socket is accepted, then closed with 4401. It carries the seat's commands too: each "
                           "command frame is answered on it (receiveSeatCommand).",
            "parameters": {"game_id": GAME_ID, "seat": {"description": "The seat's number, from 0"}},
            "messages": messages,
            "bindings": {"ws": {"method": "GET", "bindingVersion": "0.1.0", "query": {
                "type": "object", "required": ["token"], "properties": {
                    "token": {"type": "string", "description": "The seat's token"}, "from": FROM,
                    "since": SINCE, "patch": PATCH}}}},
            **close,
        },
    }
    operations = {
        f"send{name[0].upper()}{name[1:]}": {
            "action": "send", "channel": {"$ref": f"#/channels/{name}"},
            "summary": "The gateway sends the view now, then each newer one, and the same again with a seat's new "
                       "presence (with ?from=: the entries missed first)",
            "messages": [{"$ref": f"#/channels/{name}/messages/missed"}, {"$ref": f"#/channels/{name}/messages/view"},
                         {"$ref": f"#/channels/{name}/messages/patch"}]}
        for name in channels
    }
    operations["receiveSeatCommand"] = {
        "action": "receive", "channel": {"$ref": "#/channels/seatView"},
        "summary": "The gateway takes a seat's command on its socket, as POST /games/{game_id}/seats/{seat}/commands "
                   "takes it (the same rate limits, checks, idempotency by command_id), and answers it there",
        "messages": [{"$ref": "#/channels/seatView/messages/command"}],
        "reply": {"channel": {"$ref": "#/channels/seatView"},
                  "messages": [{"$ref": "#/channels/seatView/messages/commandAnswer"}]}}
    return {
        "asyncapi": "3.0.0",
        "info": {"title": "Souk WebSockets", "version": "0.1.0", "description": (
            "The WebSockets a frontend opens on the gateway to follow a game. Every frame is a TableView (JSON text)"
            ", but on a socket opened with ?from=: the HistoryPage frames of what was missed come first, and on one "
            "opened with ?patch=1: ViewPatch frames after the first view; on a seat's socket the client may send its "
            "commands (CommandFrame), each answered there by a CommandAnswer with the POST's status and body. "
            "Reconnect with ?from=<last version seen>: the history entries missed, then the current "
            "view, then every change (?since= skips the views seen, and sends no history). Close codes: "
            "x-close-codes of each channel. Presence: when a seat connects (a socket with its token on any gateway, "
            "or a request with its token) or leaves (its last socket closed, its gateway's lease or its request's "
            "window ran out), every socket of the game is sent its view again, the same version with the new "
            "presence.")},
        "defaultContentType": "application/json",
        "servers": {"gateway": {"host": host, "pathname": "/", "protocol": "wss" if secure else "ws",
                                "description": "This gateway, as the client reached it"}},
        "channels": channels,
        "operations": operations,
        "components": _components(),
    }
