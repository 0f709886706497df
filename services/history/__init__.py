"""A game's record: verifying its hash chain and commitments."""
