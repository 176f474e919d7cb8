"""The checked-in list of known failures, one file per driver.

`expected_failures/<driver>.json` maps an OpInfo's full name to
{sample index: reason}. A sample that fails and is not listed fails the
build; a listed sample that passes is reported, so the list only shrinks.
"""

import json
import os
from typing import Dict, List

from sample_checks import SampleOutcome

EXPECTATIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_failures")


def path_for(driver: str) -> str:
    return os.path.join(EXPECTATIONS_DIR, f"{driver}.json")


def load(driver: str) -> Dict[str, Dict[str, str]]:
    """{op full name: {sample index as a string: reason}}; empty when the driver has no file."""
    try:
        with open(path_for(driver)) as file:
            return json.load(file)
    except FileNotFoundError:
        return {}


def unexpected_failures(known: Dict[str, str], outcomes: List[SampleOutcome]) -> List[SampleOutcome]:
    return [o for o in outcomes if o.status == "failed" and str(o.index) not in known]


def unexpected_passes(known: Dict[str, str], outcomes: List[SampleOutcome]) -> List[SampleOutcome]:
    return [o for o in outcomes if o.status == "passed" and str(o.index) in known]
