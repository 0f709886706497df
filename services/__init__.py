"""Thin shells around ``domain/``: the event store, the engine, the projectors, the gateway and the CLI."""
