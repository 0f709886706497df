"""The embedded Redis that ``souk serve`` starts when REDIS_URL is unset."""
