"""The clock worker (issue #19): deadlines kept in Redis, each fired once as a platform command.

See ``services.clock.worker``; ``souk clock`` runs it alone, ``souk serve`` beside the engine and projector.
"""

from services.clock.worker import ClockWorker, Takeover, command_id

__all__ = ["ClockWorker", "Takeover", "command_id"]
