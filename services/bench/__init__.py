"""The benchmarks: functions that start what they measure, measure it and return the figures (a dict). ``souk
bench``'s commands (services/cli/bench/) parse the options, call them and print the figures."""


class BenchError(Exception):
    """A benchmark could not run (a server that did not start, a driver that failed): ``souk bench`` says it in
    one message and exits with status 1."""
