"""What anyone may read of a game (``/games/{game_id}``): the spectator's view and history, and the audit and the
record once the game is over."""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.params import FromPath, FromQuery

from contracts.api import Audit
from contracts.readmodels import HistoryPage, TableView
from services.gateway.controllers.seats import json_response
from services.gateway.dependencies import GatewayDep
from services.gateway.errors import ApiError
from services.gateway.inputs import in_range
from services.gateway.openapi import AllowingController
from services.history.record import RecordError
from services.history.record import encode as encode_record
from services.history.transfer import read_record
from services.store.codec import encoder, event_decoder


class SpectatorController(AllowingController):
    path = "/games/{game_id:str}"
    tags = ["spectator"]

    @get("/view")
    async def spectator_view(self, game_id: FromPath[str], gateway: GatewayDep, min_version: FromQuery[int] = 0,
                             at: FromQuery[int | None] = None) -> Response[TableView]:
        """What a spectator sees; ``min_version`` waits (up to 3 s) for the projection to reach it. ``at``: what a
        spectator saw at version ``at`` (1 to the game's version, else 400 ``bad_version``); once the game is over,
        each seat's view at any version is ``/seats/{seat}/view?at=``, without a token."""
        if at is not None:
            return json_response(encoder.encode((await gateway.reads.view_at(game_id, None, at))[0]))
        if in_range(min_version, "min_version"):
            await gateway.reads.wait_projected(game_id, min_version)
        return json_response(await gateway.reads.view_bytes(game_id, None))

    @get("/history")
    async def spectator_history(self, game_id: FromPath[str], gateway: GatewayDep, after: FromQuery[int] = 0,
                                limit: FromQuery[int] = 100) -> HistoryPage:
        """The history as a spectator may see it, paged: pass ``next_after`` as ``after``."""
        return await gateway.reads.history(game_id, None, after, limit)

    @get("/audit")
    async def audit(self, game_id: FromPath[str], gateway: GatewayDep) -> Audit:
        """Once the game is over: every event unredacted with its hashes, and the seed behind ``seed_hash``."""
        entry = await gateway.reads.lobby_entry(game_id)
        if entry.status != "over":
            raise ApiError(409, "game_not_over", "the full history and the seed are published when the game ends")
        envelopes = await gateway.stores.event_store.read(game_id)
        decode = event_decoder(entry.game).decode
        created, ended = decode(envelopes[0].payload), decode(envelopes[-1].payload)
        return Audit(game_id, ended.seed, created.seed_hash, tuple(envelopes))

    @get("/record")
    async def record(self, game_id: FromPath[str], gateway: GatewayDep) -> Response[Any]:
        """Once the game has ended (over or cancelled): its portable record, as ``souk export`` prints it: the
        header, every accepted command, every event with its envelope and hash, the seed and its commitment.
        Anyone can check it (``souk verify FILE``, ``POST /verify``) and ``souk import`` makes it a game of
        another server. 409 ``game_not_over`` before the end; 410 ``archived`` once `souk archive` moved the game
        to its record file (the operator's copy: this server no longer serves it)."""
        entry = await gateway.reads.lobby_entry(game_id)  # 404, or 410 archived
        if entry.status not in ("over", "cancelled"):
            raise ApiError(409, "game_not_over", "a game's record is published when the game ends")
        try:
            found = await read_record(gateway.stores.event_store, gateway.stores.events, game_id)
        except RecordError as exc:
            raise ApiError(409, "game_not_over", str(exc)) from None
        return json_response(encode_record(found))
