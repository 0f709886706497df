"""The engine: reads commands, decides with the domain, appends events; and its upkeep."""
