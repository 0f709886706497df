"""Clients of Souk's API: the async Python SDK (``services.client.sdk``) and the generator of the TypeScript
types for web frontends (``services.client.typescript``, ``souk types``)."""

from services.client.sdk import FINAL, Seat, SoukClient, SoukError

__all__ = ["FINAL", "Seat", "SoukClient", "SoukError"]
