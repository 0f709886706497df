"""The gateway: HTTP and WebSocket for frontends (``app``), its pub/sub listeners (``listeners``) and its errors
(``errors``)."""

from services.gateway.app import create_app

__all__ = ["create_app"]
