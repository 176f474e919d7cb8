"""Runs one pytest file, against one driver or none: pytest_runner.py [DRIVER] TEST_FILE.

With a driver, sets OPENREG_DRIVER before anything imports torch; without one
(tests of code that needs no device, such as the benchmark harness's), leaves
the environment alone. Writes JUnit XML where Bazel asks for it so .ci/run can
count test cases.
"""

import os
import sys


def main() -> int:
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: pytest_runner.py [DRIVER] TEST_FILE; got {len(sys.argv) - 1} arguments: {sys.argv[1:]}")
    *driver, test_file = sys.argv[1:]
    args = [test_file, "-q", "-p", "no:cacheprovider"]
    if driver:
        os.environ["OPENREG_DRIVER"] = driver[0]
        args += ["-o", f"junit_suite_name={driver[0]}"]
    import pytest

    xml_output = os.environ.get("XML_OUTPUT_FILE")
    if xml_output:
        args += ["--junitxml", xml_output]
    return pytest.main(args)


if __name__ == "__main__":
    sys.exit(main())
