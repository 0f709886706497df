"""The ``souk`` command line."""
