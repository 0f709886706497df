"""The games Souk ships. Importing this module registers them with ``domain.kernel``."""

from __future__ import annotations

from domain.istanbul import GAME as ISTANBUL
from domain.karawane import GAME as KARAWANE
from domain.kernel import register
from domain.samarkand import GAME as SAMARKAND
from domain.yspahan import GAME as YSPAHAN

for _game in (SAMARKAND, YSPAHAN, ISTANBUL, KARAWANE):
    register(_game)
