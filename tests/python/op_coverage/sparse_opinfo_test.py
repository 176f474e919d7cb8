"""PyTorch's OpInfos for sparse layouts on openreg, compared with the CPU.

op_db_test.py runs every OpInfo's strided samples. This runs, for each
sparse layout (COO, CSR, CSC, BSR, BSC), every OpInfo in op_db that declares
that layout (`supports_sparse`, `supports_sparse_csr`, ...) with the samples
torch's own sparse tests use (`OpInfo.sample_inputs_sparse`, or strided
samples converted to the layout; see `samples`), in float32 and float64: the functional call on openreg against the CPU, results compared
layout and all within the OpInfo's tolerances (sample_checks.py). Where the
CPU raises, openreg must raise too. Gradients are not compared here (the
strided op_db run compares them).
"""

import warnings

import pytest
import torch
import torch_openreg  # noqa: F401
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import SampleInput

import sample_checks

LAYOUTS = {
    "coo": (torch.sparse_coo, "supports_sparse"),
    "csr": (torch.sparse_csr, "supports_sparse_csr"),
    "csc": (torch.sparse_csc, "supports_sparse_csc"),
    "bsr": (torch.sparse_bsr, "supports_sparse_bsr"),
    "bsc": (torch.sparse_bsc, "supports_sparse_bsc"),
}
DTYPES = (torch.float32, torch.float64)
SEED = 0

CASES = [
    pytest.param(layout, op, id=f"{name}-{op.full_name}")
    for name, (layout, attribute) in LAYOUTS.items()
    for op in op_db
    if getattr(op, attribute, False)
]


# Per OpInfo, layout and dtype, how many strided samples are converted: the
# first few keep the run bounded (about 25 s per driver).
CONVERTED_SAMPLES = 4
CONVERT = {
    torch.sparse_coo: lambda x: x.to_sparse(),
    torch.sparse_csr: lambda x: x.to_sparse_csr(),
    torch.sparse_csc: lambda x: x.to_sparse_csc(),
    torch.sparse_bsr: lambda x: x.to_sparse_bsr((1, 1)),
    torch.sparse_bsc: lambda x: x.to_sparse_bsc((1, 1)),
}


def samples(op, layout, dtype):
    """The OpInfo's samples for `layout`. Where it declares the layout but
    has no sample function for it (most unary ufuncs and reductions), the
    first CONVERTED_SAMPLES of its strided samples whose input converts to
    the layout, as torch's sparse unary-ufunc and reduction tests make them."""
    torch.manual_seed(SEED)
    try:
        return list(op.sample_inputs_sparse(layout, "cpu", dtype))
    except NotImplementedError:
        pass
    converted = []
    for sample in op.sample_inputs("cpu", dtype):
        x = sample.input
        if not isinstance(x, torch.Tensor) or x.dim() != 2:
            continue
        converted.append(SampleInput(CONVERT[layout](x), args=sample.args, kwargs=sample.kwargs))
        if len(converted) == CONVERTED_SAMPLES:
            break
    return converted


def call(op, sample, device=None):
    def move(value):
        return value.to(device) if device is not None and isinstance(value, torch.Tensor) else value

    kwargs = {k: move(v) for k, v in sample.kwargs.items()}
    if device is not None and "device" in kwargs:
        kwargs["device"] = device  # factory-like ops (zeros_like) name theirs
    return op(move(sample.input), *[move(a) for a in sample.args], **kwargs)


# Ops whose values come from the generator: openreg's kernels draw from a CPU
# generator seeded from the device's (core/torch_runtime/generator.h), so
# only where the values go is compared, not the values.
RANDOM_OPS = {"randn_like", "rand_like", "randint_like", "bernoulli", "normal", "multinomial"}


@pytest.mark.parametrize("layout, op", CASES)
def test_sparse_samples(layout, op):
    checked = 0
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        tolerance = sample_checks.tolerance_for(op, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for index, sample in enumerate(samples(op, layout, dtype)):
                what = f"{op.full_name} {layout} {dtype} sample {index}"
                try:
                    expected = call(op, sample)
                except Exception:
                    with pytest.raises(Exception):
                        call(op, sample, "openreg")
                        torch.openreg.synchronize()
                    continue
                result = call(op, sample, "openreg")
                if op.name in RANDOM_OPS:
                    # Values are no reference; where they go still is.
                    assert result.layout == expected.layout and result.shape == expected.shape, what
                    assert result.device.type == "openreg", what
                    continue
                sample_checks.compare(result, expected, tolerance, what)
                checked += 1
    if checked == 0:
        pytest.skip(f"no sample of {op.full_name} for {layout} in {DTYPES} runs on the CPU")
