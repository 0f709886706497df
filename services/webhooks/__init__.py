"""Webhooks: "your turn" for asynchronous play (issue #19 section 5; README, Webhooks).

A game (at creation) or a seat (at a join) registers a URL (``registry``); the webhook worker (``worker``, ``souk
webhooks``) reads ``souk:events`` through its own consumer group, folds each game's table to see whose turn it is,
and puts the notices (``notices``) in an outbox in Redis (``outbox``), from which it POSTs them, signed
(``signing``), with retries and exponential backoff, to addresses it checked (``urls``). Nothing of this is on a
command's path: a receiver down or slow never delays a move.
"""
