"""Pure rules. No I/O, no clock, no logging, no global random: chance arrives as data (see ``domain.chance``)."""
