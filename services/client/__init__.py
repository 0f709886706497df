"""Clients of Souk's API: the async Python SDK (``services.client.sdk``)."""

from services.client.sdk import FINAL, Seat, SoukClient, SoukError

__all__ = ["FINAL", "Seat", "SoukClient", "SoukError"]
