"""The checked-in list of known failures, one file per driver and suite.

`expected_failures/<driver>.json` (op_db) and `expected_failures/module_db/<driver>.json`
map a key naming an OpInfo (or ModuleInfo) and a dtype (see `key`) to {sample index: reason}. A sample that fails and is not listed fails the
build; a listed sample that passes is reported, so the list only shrinks.
"""

import json
import os
from typing import Dict, List

from sample_checks import SampleOutcome

EXPECTATIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_failures")


# The dtypes every OpInfo runs in (where the CPU supports them), in report order.
DTYPES = ("float32", "float64", "int64", "bool")
# The dtypes of op_db's second suite (op_db_test.py with OPENREG_OP_DB_SUITE=op_db_extra_dtypes), in report order.
EXTRA_DTYPES = ("float16", "bfloat16", "complex64")


def key(op_full_name: str, dtype: str) -> str:
    """The name of an OpInfo's run in one dtype: its full name for float32, `name[dtype]` otherwise."""
    return op_full_name if dtype == "float32" else f"{op_full_name}[{dtype}]"


def split_key(run_key: str):
    """(op full name, dtype) of a `key`."""
    if run_key.endswith("]") and "[" in run_key:
        name, dtype = run_key[:-1].rsplit("[", 1)
        return name, dtype
    return run_key, "float32"


# The suites with expectations: op_db's OpInfos in DTYPES and in EXTRA_DTYPES, and module_db's ModuleInfos.
SUITES = ("op_db", "op_db_extra_dtypes", "module_db")


def dtypes_of(suite: str):
    """The dtypes an op_db suite runs."""
    if suite == "op_db":
        return DTYPES
    if suite == "op_db_extra_dtypes":
        return EXTRA_DTYPES
    raise ValueError(f"unknown op_db suite {suite!r}: expected op_db or op_db_extra_dtypes")


def path_for(driver: str, suite: str = "op_db") -> str:
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: expected one of {SUITES}")
    folder = EXPECTATIONS_DIR if suite == "op_db" else os.path.join(EXPECTATIONS_DIR, suite)
    return os.path.join(folder, f"{driver}.json")


def load(driver: str, suite: str = "op_db") -> Dict[str, Dict[str, str]]:
    """{key(op, dtype): {sample index as a string: reason}}; empty when the driver has no file."""
    try:
        with open(path_for(driver, suite)) as file:
            return json.load(file)
    except FileNotFoundError:
        return {}


def unexpected_failures(known: Dict[str, str], outcomes: List[SampleOutcome]) -> List[SampleOutcome]:
    return [o for o in outcomes if o.status == "failed" and str(o.index) not in known]


def unexpected_passes(known: Dict[str, str], outcomes: List[SampleOutcome]) -> List[SampleOutcome]:
    return [o for o in outcomes if o.status == "passed" and str(o.index) in known]
