#!/usr/bin/env python3
"""Counts the test cases of one `bazel test` run and prints `N passed, N failed`.

Cases are read from the JUnit XML files (test.xml) Bazel keeps for every test
target; GoogleTest and pytest both write them. Over every <testsuite> that has
no nested suites:
    failed = failures + errors
    passed = tests - failures - errors - skipped - disabled
Which files belong to the run comes from its Build Event Protocol file
(--build_event_json_file), which also lists results Bazel took from its cache
and test targets that never ran. Without one (Bazel died early), every test.xml
under the testlogs folder newer than --newer-than counts.

A test target that did not pass but whose XML shows no failing case (it failed
to build, timed out, crashed without XML, or failed outside any case) counts as
one failed case, and so does a failed Bazel command with no failure counted.

Usage: count_tests.py --testlogs DIR --newer-than FILE [--bep FILE] [--bazel-exit-code N]
"""

import argparse
import json
import os
import sys
import urllib.parse
import xml.etree.ElementTree as ElementTree

PASSING_STATUSES = {"PASSED", "FLAKY"}


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.notes = []

    def add_xml(self, path):
        """Adds the cases of one test.xml; returns how many failed."""
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            self.failed += 1
            self.notes.append(f"{path}: unreadable JUnit XML ({error}), counted as 1 failed")
            return 1
        suites = [root] if root.tag == "testsuite" else []
        suites += root.findall(".//testsuite")
        failed = 0
        for suite in suites:
            if suite.find("testsuite") is not None:
                continue  # Its totals are its children's.
            count = lambda name: int(suite.get(name, "0") or 0)
            suite_failed = count("failures") + count("errors")
            failed += suite_failed
            self.passed += max(0, count("tests") - suite_failed - count("skipped") - count("disabled"))
        self.failed += failed
        return failed

    def add_target_failure(self, label, why):
        self.failed += 1
        self.notes.append(f"{label}: {why}, counted as 1 failed")


def _local_path(uri):
    parsed = urllib.parse.urlparse(uri)
    return urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else None


def count_from_bep(bep_path, testlogs, tally):
    """Returns False when the file holds no usable events."""
    test_targets = set()
    results = {}  # (label, run, shard) -> (attempt, status, xml path or None)
    try:
        with open(bep_path, encoding="utf-8") as bep:
            events = [json.loads(line) for line in bep if line.strip()]
    except (OSError, ValueError):
        return False
    if not events:
        return False
    for event in events:
        event_id = event.get("id", {})
        if "targetConfigured" in event_id and "testSize" in event.get("configured", {}):
            test_targets.add(event_id["targetConfigured"]["label"])
        elif "testResult" in event_id and "testResult" in event:
            key = event_id["testResult"]
            result = event["testResult"]
            xml = None
            for output in result.get("testActionOutput", []):
                if output.get("name") == "test.xml":
                    xml = _local_path(output.get("uri", ""))
            slot = (key["label"], key.get("run", 1), key.get("shard", 1))
            attempt = key.get("attempt", 1)
            if slot not in results or results[slot][0] < attempt:
                results[slot] = (attempt, result.get("status", "NO_STATUS"), xml)
    for (label, _, _), (_, status, xml) in sorted(results.items()):
        test_targets.add(label)
        if xml is None or not os.path.isfile(xml):
            xml = _testlogs_xml(testlogs, label)
        if xml is not None and os.path.isfile(xml):
            failed = tally.add_xml(xml)
            if status not in PASSING_STATUSES and failed == 0:
                tally.add_target_failure(label, f"{status} although its XML shows no failing case")
        elif status in PASSING_STATUSES:
            tally.passed += 1
        else:
            tally.add_target_failure(label, f"{status} without a test.xml")
    for label in sorted(test_targets - {label for label, _, _ in results}):
        tally.add_target_failure(label, "did not run (failed to build, or the run was cut short)")
    return True


def _testlogs_xml(testlogs, label):
    """bazel-testlogs/<package>/<name>/test.xml, for an unsharded single run."""
    package, _, name = label.lstrip("@").partition("//")[2].partition(":")
    return os.path.join(testlogs, package, name, "test.xml")


def count_newer_than(testlogs, start, tally):
    for root, _, files in os.walk(testlogs, followlinks=True):
        if "test.xml" in files:
            path = os.path.join(root, "test.xml")
            if os.path.getmtime(path) > start:
                tally.add_xml(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testlogs", required=True, help="the bazel-testlogs folder")
    parser.add_argument("--newer-than", required=True, help="a file made when the run started")
    parser.add_argument("--bep", help="the run's --build_event_json_file")
    parser.add_argument("--bazel-exit-code", type=int, default=0)
    args = parser.parse_args()

    tally = Tally()
    if not (args.bep and count_from_bep(args.bep, args.testlogs, tally)):
        count_newer_than(args.testlogs, os.path.getmtime(args.newer_than), tally)
    if args.bazel_exit_code not in (0, 4) and tally.failed == 0:
        # 4 is "no test targets": nothing failed. Anything else is a build
        # or infrastructure failure no test case recorded.
        tally.add_target_failure("bazel test", f"exited with code {args.bazel_exit_code}")
    for note in tally.notes:
        print(note)
    print(f"{tally.passed} passed, {tally.failed} failed")


if __name__ == "__main__":
    sys.exit(main())
