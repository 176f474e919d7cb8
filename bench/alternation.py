"""How many times a measurement alternates openreg with its reference.

Every ratio in the table is the median, over pairs, of an openreg sample
divided by the reference sample taken next to it. On this shared 2-core VM
each CPU slows down from outside (up to ~2x) in bursts that last from a
millisecond to seconds, so the median of a handful of pairs is itself noisy:
five pairs of the 2,000-add tiny-op sample (~5 ms each) gave medians of 0.73x,
1.37x, 1.56x and 2.11x in four runs of one build, and sixty pairs 1.23x,
1.41x and 1.23x (docs/performance.md, "How many pairs a ratio needs"). A
cheap sample is therefore repeated until the pairs have taken `min_seconds`,
between `repeats` and `max_pairs` pairs; an expensive one stays at `repeats`.

The count is fixed once, from the second pair's duration (the first carries
one-time costs: a reference process building its cases, first calls),
rather than by watching a clock to the end: the two ranks of distributed_suite.py must take
the same number of samples (each sample ends in a barrier), and a count they
agree on before the loop gives them that.
"""

import dataclasses
import math
import time

# What bench:all asks of each Python measurement: 5 pairs, and more until
# they have taken 10 s (python_suite.py gives the model steps, ~1 s a pair, three times that).
DEFAULT_REPEATS = 5
DEFAULT_MIN_SECONDS = 10.0


@dataclasses.dataclass(frozen=True)
class Alternation:
    """At least `repeats` pairs; more, up to `max_pairs`, until the pairs have taken `min_seconds`."""

    repeats: int
    min_seconds: float = 0.0
    max_pairs: int = 1000

    def __post_init__(self):
        if self.repeats < 2:
            raise ValueError(f"repeats must be at least 2 (the second pair is timed), got {self.repeats}")
        if self.min_seconds < 0:
            raise ValueError(f"min_seconds must not be negative, got {self.min_seconds}")
        if self.max_pairs < self.repeats:
            raise ValueError(f"max_pairs ({self.max_pairs}) must be at least repeats ({self.repeats})")

    def pairs(self, pair_seconds: float) -> int:
        """The number of pairs to take in all, given how long one takes."""
        if pair_seconds <= 0:
            wanted = self.max_pairs if self.min_seconds > 0 else self.repeats
        else:
            wanted = math.ceil(self.min_seconds / pair_seconds)
        return min(self.max_pairs, max(self.repeats, wanted))


def alternate(openreg_sample, reference_sample, alternation: Alternation, agree=None, clock=time.perf_counter):
    """Samples reference, then openreg, pair after pair; returns {"openreg": [...], "reference": [...]}.

    Takes at least two pairs, to time the second.

    `agree(count)`, if given, returns the count every participant will use
    (distributed_suite.py takes the largest over the ranks).
    """
    samples = {"openreg": [], "reference": []}

    def take_pair():
        samples["reference"].append(reference_sample())
        samples["openreg"].append(openreg_sample())

    take_pair()
    start = clock()
    take_pair()
    count = alternation.pairs(clock() - start)
    if agree is not None:
        count = agree(count)
    for _ in range(count - 2):
        take_pair()
    return samples
