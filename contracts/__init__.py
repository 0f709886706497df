"""Souk's wire format: msgspec Structs for commands, events and read models.

Every stored or sent type carries an explicit, stable tag (``"samarkand.CardChosen"``); a tag is never derived
from a class name. New event fields get defaults; a changed meaning gets a new type.
"""
