"""Helpers shared by the Python tests."""

import os
import subprocess
import sys
import textwrap
from typing import Dict, Optional

import torch


def run_python(code: str, env: Optional[Dict[str, Optional[str]]] = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with `env` applied (None unsets).

    A fresh process is the only way to test start-up: the runtime reads its
    configuration once, at first use.
    """
    child_env = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            child_env.pop(key, None)
        else:
            child_env[key] = value
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_same(openreg_result: torch.Tensor, cpu_result: torch.Tensor, **tolerances) -> None:
    """The openreg result equals the CPU one: same device type, dtype, shape and values."""
    assert openreg_result.device.type == "openreg", openreg_result.device
    torch.testing.assert_close(openreg_result.cpu(), cpu_result, **tolerances)
