"""Runs one pytest file against one driver: pytest_runner.py DRIVER TEST_FILE.

Sets OPENREG_DRIVER before anything imports torch, and writes JUnit XML where
Bazel asks for it so .ci/run can count test cases.
"""

import os
import sys


def main() -> int:
    driver, test_file = sys.argv[1], sys.argv[2]
    os.environ["OPENREG_DRIVER"] = driver
    import pytest

    args = [test_file, "-q", "-p", "no:cacheprovider", "-o", f"junit_suite_name={driver}"]
    xml_output = os.environ.get("XML_OUTPUT_FILE")
    if xml_output:
        args += ["--junitxml", xml_output]
    return pytest.main(args)


if __name__ == "__main__":
    sys.exit(main())
