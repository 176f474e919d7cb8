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


def seeded_tensor(dtype: torch.dtype, shape, seed: int = 0, integers=(-4, 5)) -> torch.Tensor:
    """A CPU tensor of `dtype` from a generator seeded with `seed`: normal floats
    (and complex), 0/1 booleans, integers in [integers[0], integers[1])."""
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    return torch.randint(*integers, shape, generator=generator).to(dtype)


def use_shared_inductor_cache() -> None:
    """Points Inductor's caches at the user's cache folder, outside the clone
    and outside Bazel's per-test temporary HOME, unless TORCHINDUCTOR_CACHE_DIR
    is set, so every test and both drivers share compiled artifacts. Compiles
    in the test process (TORCHINDUCTOR_COMPILE_THREADS=1): on two cores a
    pool of compile workers costs more than it saves for these small graphs.
    Call before importing torch._inductor."""
    import pwd

    home = pwd.getpwuid(os.getuid()).pw_dir
    # An empty value counts as unset: Inductor would take it as the current
    # directory and fill the clone with its cache.
    if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(home, ".cache", "openreg", "inductor")
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")


class CountingMeta:
    """Replaces the Meta kernels of `ops` with ones that count their calls: the
    CPU fallback sizes fresh results with them (core/aten/meta_shapes.h), the
    direct kernels call ATen's C++ meta functions themselves."""

    def __init__(self):
        self.calls = []
        self.library = torch.library.Library("aten", "IMPL")

    def replace(self, op, result):
        def counted(*arguments, **keywords):
            self.calls.append(op)
            return result(*arguments, **keywords)
        self.library.impl(op, counted, "Meta")
