"""The event store: the streams of events and commands on Redis, their keys and encodings, the lean RESP connection of the hot paths."""
