"""Benchmarks (``souk bench``)."""
