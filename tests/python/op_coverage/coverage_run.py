"""What op_db_test.py and module_db_test.py share: sharding, the results
file, and holding each run's outcomes against the driver's expected failures.

A run is one OpInfo (or ModuleInfo) in one dtype, named by expectations.key.
Every run's outcomes go to a JSON file in Bazel's undeclared outputs, which
tools/op_coverage/generate_report.py turns into the reports.
"""

import atexit
import collections
import json
import os
import unittest
import warnings
from typing import List

import expectations
from sample_checks import SampleOutcome


def of_this_shard(items: list) -> list:
    """Every N-th item for Bazel's shard N; all of them when not sharded."""
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    index = int(os.environ.get("TEST_SHARD_INDEX", "0"))
    status_file = os.environ.get("TEST_SHARD_STATUS_FILE")
    if status_file:
        # Tells Bazel this test shards itself.
        open(status_file, "a").close()
    return items[index::total]


def _describe(outcomes: List[SampleOutcome]) -> str:
    return "\n".join(f"  sample {o.index}: {o.reason}" for o in outcomes)


class Recorder:
    """The outcomes of one test process (a shard on one driver) and the expected failures they are held to."""

    def __init__(self, driver: str, suite: str, results_file: str):
        self.driver = driver
        self.suite = suite
        self.results_file = results_file
        self.known_failures = expectations.load(driver, suite)
        self.results = {"driver": driver, "ops": {}, "unexpected_passes": {}}
        # After pytest has stopped capturing output, so the line reaches the test log.
        atexit.register(lambda: print(self.summary()))

    def summary(self) -> str:
        """One line: how many samples of this process's runs passed, failed and were skipped."""
        counts = collections.Counter(status for outcomes in self.results["ops"].values() for _, status, _ in outcomes)
        total = sum(counts.values())
        rate = f"{100.0 * counts['passed'] / total:.2f}%" if total else "n/a"
        return (
            f"{self.suite} on {self.driver}: {counts['passed']} of {total} samples passed ({rate}), "
            f"{counts['failed']} failed, {counts['skipped']} skipped, in {len(self.results['ops'])} runs"
        )

    def check(self, test: unittest.TestCase, name: str, outcomes: List[SampleOutcome]) -> None:
        """Records the run `name`; fails `test` on a failure not listed, warns about a listed sample that passed."""
        known = self.known_failures.get(name, {})
        path = expectations.path_for(self.driver, self.suite)
        self.results["ops"][name] = [[o.index, o.status, o.reason] for o in outcomes]
        passes = expectations.unexpected_passes(known, outcomes)
        if passes:
            self.results["unexpected_passes"][name] = [o.index for o in passes]
            warnings.warn(
                f"{name}: samples {[o.index for o in passes]} pass on {self.driver} but are listed in "
                f"{path}; remove them from the list."
            )
        self._save()
        failures = expectations.unexpected_failures(known, outcomes)
        if failures:
            test.fail(
                f"{name}: {len(failures)} sample(s) fail on {self.driver} that are not in "
                f"{path}:\n{_describe(failures)}"
            )

    def _save(self) -> None:
        outputs = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        if not outputs:
            return
        with open(os.path.join(outputs, self.results_file), "w") as file:
            json.dump(self.results, file, indent=0, sort_keys=True)
