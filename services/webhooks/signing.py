"""The signature of a webhook POST: HMAC-SHA256, keyed with the registration's secret, over the timestamp, a dot
and the body, exactly as sent (Stripe's scheme): a receiver recomputes it, compares in constant time, and refuses a
timestamp too old (a replayed POST). README, Webhooks, shows the few lines of Python."""

from __future__ import annotations

import hashlib
import hmac

TIMESTAMP = "Souk-Timestamp"  # unix seconds, a whole number, when this attempt was sent
SIGNATURE = "Souk-Signature"  # "v1=" + hex HMAC-SHA256(secret, timestamp + "." + body)
IDEMPOTENCY_KEY = "Idempotency-Key"  # the notice's key, the same on every attempt: "{game}:{version}:{kind}:{seat}"
TOLERANCE_S = 300  # how old a timestamp a receiver should accept (the verifier's default)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def headers(secret: str, key: str, body: bytes, now: float) -> dict[str, str]:
    timestamp = str(int(now))
    return {"Content-Type": "application/json", TIMESTAMP: timestamp, SIGNATURE: signature(secret, timestamp, body),
            IDEMPOTENCY_KEY: key}


def verify(secret: str, timestamp: str, body: bytes, signed: str, now: float, tolerance_s: float = TOLERANCE_S) -> bool:
    """Whether ``signed`` (the Souk-Signature header) signs ``body`` at ``timestamp``, sent at most ``tolerance_s``
    from ``now``."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(now - sent) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), signed)
