"""The sides of a table row take their timed reps in turn (`bench.timing.events_in_turn`,
`back_to_back_in_turn`): one rep of each after the other, each side its own number of reps, so that a slow
spell of the device falls on every side alike."""
from __future__ import annotations

from bench.timing import back_to_back_in_turn, events_in_turn


ORDER: list[str] = []  # what ran, in order: a side's name for its call, "timed" for a timed rep


class RecordingTimer:
    """A timer whose measurement of a call is the call's result, recording the order of the calls."""

    def events(self, call, reps: int) -> list[float]:
        ORDER.extend(["timed"] * reps)
        return [call() for _ in range(reps)]

    def back_to_back(self, call, count: int, passes: int) -> float:
        ORDER.extend(["timed"] * passes)
        return call() / count


def hand() -> float:
    ORDER.append("hand")
    return 2.0


def gen() -> float:
    ORDER.append("gen")
    return 3.0


def test_event_reps_alternate_between_the_sides_until_each_has_its_own() -> None:
    ORDER.clear()
    times = events_in_turn(RecordingTimer(), {"hand": hand, "gen": gen}, {"hand": 2, "gen": 3})
    assert times == {"hand": [2.0, 2.0], "gen": [3.0, 3.0, 3.0]}
    # each timed rep comes right after an untimed call of the same side
    assert ORDER == ["hand", "timed", "hand", "gen", "timed", "gen"] * 2 + ["gen", "timed", "gen"]


def test_back_to_back_passes_alternate_and_keep_each_sides_best() -> None:
    ORDER.clear()
    best = back_to_back_in_turn(RecordingTimer(), {"hand": hand, "gen": gen}, {"hand": 4, "gen": 6},
                                {"hand": 3, "gen": 1})
    assert best == {"hand": 0.5, "gen": 0.5}
    assert [name for name in ORDER if name != "timed"] == ["hand", "gen", "hand", "hand"]
