"""``souk bench realtime``'s arithmetic (services/bench/realtime.py): which history entries make a figure, and
which instants each subtracts. The run itself needs a server with its clock worker (README's table)."""

from __future__ import annotations

from services.bench.realtime import _Entry, _Event, _Timer, latencies


class FakeSeat:
    def __init__(self, arrivals: list[tuple[int, float]]) -> None:
        self.arrivals = arrivals

    def pushed_at(self, version: int) -> float | None:
        return next((at for v, at in self.arrivals if v >= version), None)


def entry(seq: int, type: str, at: float, command: str = "c", timer: _Timer | None = None) -> _Entry:
    return _Entry(seq=seq, type=type, command_id=command, recorded_at=at, event=_Event(timer=timer))


def test_a_value_closed_by_its_tick_is_measured_from_its_due_and_each_seat_from_the_event():
    entries = [
        entry(10, "samarkand.CardsRevealed", 100.0, "x"),
        entry(11, "table.ClocksSet", 100.0, "x", _Timer("1:10", 100.2)),
        entry(12, "samarkand.ValueClosed", 100.205, "clock:11:tick:"),
        entry(13, "table.ClocksSet", 100.205, "clock:11:tick:", _Timer("1:9", 100.405)),
        entry(14, "samarkand.Answered", 100.3, "y"),
        entry(15, "samarkand.ValueClosed", 100.31, "y"),  # closed by a command (every seat stopped): not a tick
        entry(16, "samarkand.GoodsBought", 100.31, "y"),
        entry(17, "table.ClocksSet", 100.31, "y", _Timer("1:8", 100.51)),
        entry(18, "samarkand.ValueClosed", 100.52, "clock:17:tick:"),
        entry(19, "table.ClocksSet", 100.52, "clock:17:tick:", None),
    ]
    seats = [FakeSeat([(11, 100.01), (13, 100.215), (19, 100.6)]), FakeSeat([(19, 100.53)])]
    ticks, pushes = latencies(entries, seats)  # type: ignore[arg-type]
    assert [round(t, 3) for t in ticks] == [0.005, 0.01]
    assert [round(p, 3) for p in pushes] == [0.01, 0.325, 0.08, 0.01]
