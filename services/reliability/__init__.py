"""The reliability suite (issue #8, "the proof, kept"): ``souk chaos`` runs the real processes under load and
faults, then checks that no command was lost, duplicated, left unanswered or answered two ways, that every chain
holds, that every game decides again byte for byte from its commands and seed, and that the read models equal a
rebuild. ``chaos`` runs it, ``cluster`` holds the processes, ``driver`` the clients, ``checks`` the proof."""
