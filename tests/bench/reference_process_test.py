"""bench/reference_process.py: every process of the suite keeps its freed memory the same way."""

import json
import os
import subprocess
import sys

import reference_process
from reference_process import MALLOC_KEEPS_FREED_MEMORY

# Prints the malloc settings the process runs with, after asking to run with those of the suite.
SCRIPT = """
import json, os, sys
sys.path.insert(0, {bench!r})
import reference_process
reference_process.run_with_malloc_keeping_freed_memory()
print(json.dumps({{name: os.environ.get(name) for name in reference_process.MALLOC_KEEPS_FREED_MEMORY}}))
"""


def _run(tmp_path, env):
    # A script file, as python_suite.py is: executing again runs the same argv.
    script = tmp_path / "suite.py"
    script.write_text(SCRIPT.format(bench=os.path.dirname(os.path.abspath(reference_process.__file__))))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_process_without_the_settings_runs_again_with_them(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in MALLOC_KEEPS_FREED_MEMORY}
    # glibc reads them only at start: the process must have been executed again, printing once, with them set.
    printed = _run(tmp_path, env).splitlines()
    assert len(printed) == 1
    assert json.loads(printed[0]) == MALLOC_KEEPS_FREED_MEMORY


def test_a_process_with_the_settings_runs_on(tmp_path):
    # Executing again would loop: the test would time out.
    printed = _run(tmp_path, {**os.environ, **MALLOC_KEEPS_FREED_MEMORY}).splitlines()
    assert [json.loads(line) for line in printed] == [MALLOC_KEEPS_FREED_MEMORY]
