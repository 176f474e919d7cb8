"""bench/alternation.py: how many pairs a measurement takes, and in what order it takes them."""

import pytest

from alternation import Alternation, alternate


def test_a_cheap_pair_is_repeated_until_the_pairs_fill_the_time():
    assert Alternation(repeats=5, min_seconds=6.0).pairs(pair_seconds=0.1) == 60


def test_an_expensive_pair_is_taken_the_fewest_times():
    assert Alternation(repeats=5, min_seconds=6.0).pairs(pair_seconds=2.0) == 5


def test_the_count_stops_at_max_pairs():
    assert Alternation(repeats=5, min_seconds=6.0, max_pairs=100).pairs(pair_seconds=0.001) == 100


def test_a_pair_too_fast_for_the_clock_takes_max_pairs():
    assert Alternation(repeats=5, min_seconds=6.0, max_pairs=40).pairs(pair_seconds=0.0) == 40


def test_without_a_time_budget_the_count_is_repeats():
    assert Alternation(repeats=3).pairs(pair_seconds=0.0) == 3
    assert Alternation(repeats=3).pairs(pair_seconds=0.5) == 3


def test_reference_and_openreg_alternate_reference_first():
    order = []
    samples = alternate(lambda: order.append("openreg") or 2.0, lambda: order.append("reference") or 1.0,
                        Alternation(repeats=3))
    assert order == ["reference", "openreg"] * 3
    assert samples == {"openreg": [2.0] * 3, "reference": [1.0] * 3}


def test_the_count_comes_from_the_second_pair_not_the_first():
    now = [0.0]
    durations = iter([5.0] + [0.5] * 20)  # the first pair pays one-time costs

    def reference():
        now[0] += next(durations)
        return 1.0

    samples = alternate(lambda: 2.0, reference, Alternation(repeats=2, min_seconds=6.0), clock=lambda: now[0])
    # 0.5 s per pair after the first: 12 pairs fill 6 s (a count from the first pair would have been 2).
    assert len(samples["reference"]) == 12


def test_the_agreed_count_replaces_this_process_s_own():
    asked = []

    def agree(count):
        asked.append(count)
        return 7

    samples = alternate(lambda: 2.0, lambda: 1.0, Alternation(repeats=3), agree)
    assert asked == [3]
    assert len(samples["openreg"]) == len(samples["reference"]) == 7


@pytest.mark.parametrize("arguments, message", [
    ({"repeats": 1}, r"repeats must be at least 2 \(the second pair is timed\), got 1"),
    ({"repeats": 5, "min_seconds": -1.0}, "min_seconds must not be negative, got -1.0"),
    ({"repeats": 5, "max_pairs": 4}, r"max_pairs \(4\) must be at least repeats \(5\)"),
])
def test_a_policy_that_cannot_be_followed_is_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        Alternation(**arguments)
