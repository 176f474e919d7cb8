"""Helpers shared by the Python tests."""

import os
import re
import subprocess
import sys
import textwrap
from typing import Dict, Optional

import pytest
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


def on_device(value):
    """`value` moved to openreg if it is a tensor (each tensor of a list too)."""
    if isinstance(value, list):
        return [on_device(v) for v in value]
    return value.to("openreg") if isinstance(value, torch.Tensor) else value


def same_result_or_error(function, *arguments, tolerances=None, **keywords) -> None:
    """`function` on the arguments moved to openreg gives the CPU's result (dtype, shape, values, NaNs where the
    CPU's are), or raises the CPU's error, at the latest by the next synchronization (the CPU fallback raises on
    the stream). `tolerances`, a function of the result's dtype, gives torch.testing.assert_close's (its defaults
    when None). Tensors are moved before the CPU call, which may change them in place."""
    device_arguments = [on_device(a) for a in arguments]
    device_keywords = {k: on_device(v) for k, v in keywords.items()}
    try:
        cpu = function(*arguments, **keywords)
    except RuntimeError as cpu_error:
        with pytest.raises(RuntimeError, match=re.escape(str(cpu_error).split("\n")[0][:40])):
            function(*device_arguments, **device_keywords)
            torch.openreg.synchronize()
        return
    device = function(*device_arguments, **device_keywords)
    assert device.dtype == cpu.dtype
    assert device.shape == cpu.shape
    assert_same(device, cpu, equal_nan=True, **(tolerances(cpu.dtype) if tolerances else {}))


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


# The errors ATen's meta functions raise at the call.
CALL_ERRORS = (RuntimeError, IndexError, TypeError, ValueError)


def same_bits_as_cpu(function, *arguments, at_the_call=True):
    """`function` on the arguments moved to openreg gives the CPU's result bit for bit, with its dtype, shape and
    strides (each result of a tuple), or raises the CPU's error: of the same type and first line, at the call (a
    meta function's error, on the calling thread); with `at_the_call` False, an error holding its first line, at
    the latest by the next synchronization (the CPU fallback raises some from the stream, naming the op)."""
    device_arguments = [on_device(a) for a in arguments]
    try:
        cpu = function(*arguments)
    except CALL_ERRORS as cpu_error:
        with pytest.raises(type(cpu_error) if at_the_call else CALL_ERRORS) as device_error:
            function(*device_arguments)
            if not at_the_call:
                torch.openreg.synchronize()
        first_line = str(cpu_error).split("\n")[0]
        if at_the_call:
            assert str(device_error.value).split("\n")[0] == first_line
        else:
            assert first_line in str(device_error.value)
        return
    device = function(*device_arguments)
    pairs = zip(device, cpu) if isinstance(cpu, tuple) else [(device, cpu)]
    for device_result, cpu_result in pairs:
        assert device_result.dtype == cpu_result.dtype
        assert device_result.shape == cpu_result.shape
        assert device_result.stride() == cpu_result.stride()
        assert_same(device_result, cpu_result, rtol=0, atol=0, equal_nan=True)


def raises_the_cpus_error_at_the_call(call):
    """`call(device)` raises on openreg the error it raises on the CPU, of the same type and first line, at the
    call: a C++ meta function's, on the calling thread, without a synchronization."""
    with pytest.raises(CALL_ERRORS) as cpu_error:
        call("cpu")
    with pytest.raises(type(cpu_error.value)) as device_error:
        call("openreg")
    assert str(device_error.value).split("\n")[0] == str(cpu_error.value).split("\n")[0]
