"""``souk bench``'s commands, one module per benchmark (loaded by name from ``services.cli.main.BENCH``): each
parses its options and prints the figures that its library in ``services/bench/`` measures."""
