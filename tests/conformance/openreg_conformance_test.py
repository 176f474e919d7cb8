"""The standalone conformance binary, and per-driver expectations.

    openreg_conformance_test.py OPENREG_CONFORMANCE CPU_SIM_SO

Runs the binary as a driver author would (a driver path on the command line)
against the shipped cpu_sim, then with expectation files that list tests
cpu_sim passes or (given a bad option, so context_create fails) fails.
"""

import os
import subprocess
import sys
import tempfile
import unittest

BINARY = os.path.abspath(sys.argv[1])
DRIVER = os.path.abspath(sys.argv[2])
# Two quick tests; the expectations below are about these.
FILTER = "--gtest_filter=*StreamTest.QueryIsExact*:*MemoryTest.MemGetInfoTracksAllocations*"


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600)


class StandaloneBinaryTest(unittest.TestCase):
    def expectations(self, text):
        handle, path = tempfile.mkstemp(suffix=".txt", dir=os.environ.get("TEST_TMPDIR"))
        with os.fdopen(handle, "w") as file:
            file.write(text)
        self.addCleanup(os.remove, path)
        return "--openreg_expectations=" + path

    def test_whole_suite_passes_on_a_driver_given_by_path(self):
        result = run(DRIVER)
        self.assertEqual(result.returncode, 0, result.stdout[-4000:] + result.stderr)
        self.assertIn("[  PASSED  ]", result.stdout)
        self.assertNotIn("[  FAILED  ]", result.stdout)

    def test_without_a_driver_it_prints_the_usage(self):
        result = run()
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage:", result.stderr)
        self.assertIn("DRIVER.so", result.stderr)

    def test_unsupported_test_is_skipped_with_its_reason(self):
        result = run("--openreg_driver=" + DRIVER, self.expectations("unsupported StreamTest.QueryIsExact: no exact queries here\n"), FILTER)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("[  SKIPPED ] 1 test", result.stdout)
        self.assertIn("unsupported by this driver", result.stdout)
        self.assertIn("no exact queries here", result.stdout)

    def test_expected_failure_that_passes_fails_the_run(self):
        result = run(DRIVER, self.expectations("expected_failure StreamTest.QueryIsExact: bug 12\n"), FILTER)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertIn("listed as an expected failure", result.stdout)
        self.assertIn("bug 12", result.stdout)
        self.assertIn("but it passed", result.stdout)
        self.assertIn("[  FAILED  ] Drivers/StreamTest.QueryIsExact/", result.stdout)

    def test_expected_failure_that_fails_does_not_fail_the_run(self):
        # An unknown option makes context_create fail, so every test with a
        # context fails; with both listed (one by a pattern) the run still passes.
        entries = "expected_failure StreamTest.QueryIsExact: context_create refuses\nexpected_failure MemoryTest.MemGetInfo*: same\n"
        bad_options = "--openreg_driver_options=no_such_option=1"
        unlisted = run(DRIVER, bad_options, FILTER)
        self.assertNotEqual(unlisted.returncode, 0, unlisted.stdout)
        result = run(DRIVER, bad_options, self.expectations(entries), FILTER)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("[  SKIPPED ] 2 tests", result.stdout)
        self.assertIn("expected failure (", result.stdout)
        self.assertIn("context_create refuses); it failed with:", result.stdout)

    def test_malformed_file_names_the_line(self):
        result = run(DRIVER, self.expectations("# comment\n\nskip StreamTest.QueryIsExact: why\n"))
        self.assertEqual(result.returncode, 2)
        self.assertRegex(result.stderr, r"\.txt:3: expected '<kind> <Suite\.Test>: <reason>'")
        self.assertIn("found kind 'skip'", result.stderr)
        result = run(DRIVER, self.expectations("unsupported StreamTest.QueryIsExact\n"))
        self.assertEqual(result.returncode, 2)
        self.assertIn(":1: expected", result.stderr)

    def test_entry_matching_no_test_is_an_error(self):
        result = run(DRIVER, self.expectations("unsupported StreamTest.NoSuchTest: renamed long ago\n"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("'StreamTest.NoSuchTest' matches no conformance test", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
