"""Runs one OpInfo's sample inputs on the CPU and on openreg and compares them.

Every sample is made on the CPU (so both sides see the same numbers) and
copied to the device. A sample passes when every check that applies to it
passes: the functional call, the out= variant and the in-place variant where
the OpInfo declares them, and the gradients when the op supports autograd.
Where the CPU raises, openreg must raise too.
"""

import dataclasses
import unittest
from typing import Any, Callable, List, Optional, Tuple

import torch
from torch.testing._comparison import default_tolerances
from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
from torch.testing._internal.opinfo.core import DecorateInfo
from torch.utils._pytree import tree_flatten, tree_map

# Every sample is generated under this seed, so a sample's index names the
# same inputs in every run.
SAMPLE_SEED = 1234


@dataclasses.dataclass(frozen=True)
class CpuComparison:
    """PyTorch's own test comparing a device with the CPU, whose skips and tolerance overrides apply here.

    Its skips mean "the CPU result is not a reference for another device"
    (uninitialized memory, random numbers). `tolerance` is the (atol, rtol)
    it starts from; None means assert_close's default for the dtype.
    """

    kind: str  # "OpInfo" or "ModuleInfo", for messages
    test: Tuple[str, str]  # (test class, test name) as DecorateInfo names them
    tolerance: Optional[Tuple[float, float]]


# TestCommon.test_compare_cpu allows 1e-3 for results and gradients.
OP_DB_COMPARISON = CpuComparison("OpInfo", ("TestCommon", "test_compare_cpu"), (1e-3, 1e-3))


@dataclasses.dataclass
class SampleOutcome:
    """What happened to one sample: passed, failed or skipped, and why."""

    index: int
    status: str
    reason: str = ""


@dataclasses.dataclass
class Tolerance:
    atol: float
    rtol: float


def _decorate_infos(info) -> List[DecorateInfo]:
    """The skips and decorators of an OpInfo or a ModuleInfo (whose `decorators` hold its skips too),
    each as a DecorateInfo (a bare decorator applies to every test)."""
    return [
        each if isinstance(each, DecorateInfo) else DecorateInfo(each)
        for each in list(getattr(info, "skips", ())) + list(info.decorators or ())
    ]


def declared_skip(op, dtype: torch.dtype, comparison: CpuComparison = OP_DB_COMPARISON) -> Optional[str]:
    """The reason the OpInfo (or ModuleInfo) gives for skipping its comparison with the CPU, if any."""
    for info in _decorate_infos(op):
        if (info.cls_name, info.test_name) != comparison.test:
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        if not info.active_if or callable(info.active_if):
            continue
        for decorator in info.decorators:
            reason = _skip_reason(decorator)
            if reason is not None:
                return f"the {comparison.kind} skips its CPU comparison: {reason}"
    return None


def _default_tolerance(dtype: torch.dtype) -> Tuple[float, float]:
    """(atol, rtol) that assert_close (and TestCase.assertEqual) use for `dtype` when given none."""
    rtol, atol = default_tolerances(dtype)
    return atol, rtol


def _skip_reason(decorator: Callable) -> Optional[str]:
    """The message of a unittest.skip(...) decorator, None for anything else."""
    try:
        decorator(lambda: None)()
    except unittest.SkipTest as skip:
        return str(skip) or "skipped"
    except Exception:  # any other decorator is not a skip
        return None
    return None


def tolerance_for(op, dtype: torch.dtype, comparison: CpuComparison = OP_DB_COMPARISON) -> Tolerance:
    """The tolerance for comparing the op's `dtype` results with the CPU's.

    PyTorch's own device-versus-CPU test (TestCommon.test_compare_cpu) allows
    1e-3; the OpInfo's overrides for every test or for that one loosen it.
    Most ops run the CPU's own kernel and match exactly, but ops ATen
    implements once for every device but the CPU (CompositeExplicitAutograd
    kernels, such as addr's) compute in another order.
    Another `comparison` starts from its own tolerance.
    """
    atol, rtol = _default_tolerance(dtype)
    if comparison.tolerance is not None:
        # Never below assert_close's default for the dtype: test_compare_cpu's
        # 1e-3 is finer than bfloat16 resolves (its default rtol is 1.6e-2).
        atol, rtol = max(atol, comparison.tolerance[0]), max(rtol, comparison.tolerance[1])
    for info in _decorate_infos(op):
        if info.test_name not in (None, comparison.test[1]):
            continue
        for decorator in info.decorators:
            if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype].atol)
                rtol = max(rtol, decorator.d[dtype].rtol)
            elif isinstance(decorator, precisionOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype])
    return Tolerance(atol, rtol)


def to_device(device: str) -> Callable:
    def move(value):
        # SampleInput.transform passes dtypes too.
        if isinstance(value, torch.Tensor):
            moved = value.detach().to(device)
            return moved.requires_grad_(value.requires_grad)
        return value

    return move


def _on_device(sample, device: str):
    moved = sample.transform(to_device(device))
    # Factory ops name the device in their keyword arguments.
    for key, value in list(moved.kwargs.items()):
        if isinstance(value, (str, torch.device)) and key == "device":
            moved.kwargs[key] = device
    return moved


def _detached_copy(sample):
    return sample.transform(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t)


def _call(fn: Callable, sample, **extra) -> Any:
    return fn(sample.input, *sample.args, **sample.kwargs, **extra)


def _to_cpu(value: Any) -> Any:
    return tree_map(lambda v: v.detach().cpu() if isinstance(v, torch.Tensor) else v, value)


def _wrong_devices(value: Any) -> List[str]:
    return [
        str(leaf.device)
        for leaf in tree_flatten(value)[0]
        if isinstance(leaf, torch.Tensor) and leaf.device.type != "openreg"
    ]


def compare(device_result: Any, cpu_result: Any, tolerance: Tolerance, what: str) -> None:
    """Raises AssertionError naming `what` when the results differ."""
    wrong = _wrong_devices(device_result)
    cpu_leaves = [leaf for leaf in tree_flatten(cpu_result)[0] if isinstance(leaf, torch.Tensor)]
    if wrong and len(cpu_leaves) > 0:
        raise AssertionError(f"{what}: results on {wrong} instead of openreg")
    try:
        torch.testing.assert_close(
            _to_cpu(device_result),
            cpu_result,
            atol=tolerance.atol,
            rtol=tolerance.rtol,
            equal_nan=True,
            check_device=False,
        )
    except AssertionError as error:
        raise AssertionError(f"{what}: {error}") from None


def _run(fn: Callable) -> Tuple[Any, Optional[BaseException]]:
    try:
        return fn(), None
    except Exception as error:  # the error itself is what is compared
        return None, error


def _on_openreg(fn: Callable) -> Callable:
    """`fn` with openreg as the default device (for factory samples that name none),
    then a device synchronization so asynchronous kernel errors surface in it."""

    def run():
        with torch.device("openreg"):
            result = fn()
        torch.openreg.synchronize()
        return result

    return run


def check_call(cpu_fn: Callable, device_fn: Callable, tolerance: Tolerance, what: str) -> Any:
    """Compares one call on both sides; returns the CPU result (None when it raised)."""
    cpu_result, cpu_error = _run(cpu_fn)
    device_result, device_error = _run(_on_openreg(device_fn))
    if cpu_error is not None:
        if device_error is None:
            raise AssertionError(f"{what}: no error, but the CPU raises {type(cpu_error).__name__}: {cpu_error}")
        return None
    if device_error is not None:
        raise AssertionError(f"{what} raises {type(device_error).__name__}: {device_error}")
    compare(device_result, cpu_result, tolerance, what)
    return cpu_result


def _differentiable_outputs(result: Any) -> List[torch.Tensor]:
    return [
        leaf
        for leaf in tree_flatten(result)[0]
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad
    ]


def _grad_inputs(sample) -> List[torch.Tensor]:
    leaves = tree_flatten((sample.input, sample.args, sample.kwargs))[0]
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]


def _gradients(op, sample, cotangents: List[torch.Tensor]) -> List[Optional[torch.Tensor]]:
    outputs = _differentiable_outputs(sample.output_process_fn_grad(_call(op, sample)))
    inputs = _grad_inputs(sample)
    return list(torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True))


def _check_gradients(op, cpu_sample, device_sample, cpu_result, tolerance: Tolerance) -> None:
    outputs = _differentiable_outputs(cpu_sample.output_process_fn_grad(cpu_result))
    if not outputs or not _grad_inputs(cpu_sample):
        return
    cotangents = [torch.randn_like(output) for output in outputs]
    device_cotangents = [c.to("openreg") for c in cotangents]
    check_call(
        lambda: _gradients(op, cpu_sample, cotangents),
        lambda: _gradients(op, device_sample, device_cotangents),
        tolerance,
        "gradients",
    )


def _out_like(result: Any, device: str) -> Any:
    return tree_map(
        lambda v: torch.empty_like(v, device=device) if isinstance(v, torch.Tensor) else v,
        result,
    )


def _check_out(op, cpu_sample, device: str, cpu_result, tolerance: Tolerance) -> None:
    leaves = tree_flatten(cpu_result)[0]
    if not leaves or not all(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return
    cpu_copy = _detached_copy(cpu_sample)
    device_copy = _on_device(cpu_copy, device)
    out = _out_like(cpu_result.detach() if isinstance(cpu_result, torch.Tensor) else _to_cpu(cpu_result), device)
    cpu_out = _out_like(_to_cpu(cpu_result), "cpu")

    def device_call():
        _call(op, device_copy, out=out)
        return out

    def cpu_call():
        _call(op, cpu_copy, out=cpu_out)
        return cpu_out

    check_call(cpu_call, device_call, tolerance, "out=")


def _check_inplace(op, cpu_sample, device: str, tolerance: Tolerance) -> None:
    inplace = op.get_inplace()
    cpu_copy = _detached_copy(cpu_sample)
    device_copy = _on_device(cpu_copy, device)
    cpu_copy = _detached_copy(cpu_copy)

    def run(sample):
        def call():
            result = _call(inplace, sample)
            return result, sample.input

        return call

    check_call(run(cpu_copy), run(device_copy), tolerance, "in-place")


def check_sample(op, cpu_sample, device: str, tolerance: Tolerance) -> None:
    """Raises AssertionError describing the first check `cpu_sample` fails on openreg."""
    device_sample = _on_device(cpu_sample, device)
    torch.manual_seed(SAMPLE_SEED)
    cotangent_state = torch.get_rng_state()
    cpu_result = check_call(
        lambda: _call(op, cpu_sample), lambda: _call(op, device_sample), tolerance, "result"
    )
    if cpu_result is None:
        return
    if op.supports_autograd:
        torch.set_rng_state(cotangent_state)
        _check_gradients(op, cpu_sample, device_sample, cpu_result, tolerance)
    if op.supports_out:
        _check_out(op, cpu_sample, device, cpu_result, tolerance)
    if op.get_inplace() is not None and isinstance(cpu_sample.input, torch.Tensor):
        _check_inplace(op, cpu_sample, device, tolerance)


def is_random(call: Callable[[], Any]) -> bool:
    """Whether the results of `call` (on the CPU) depend on the random seed."""
    results = []
    for seed in (SAMPLE_SEED, SAMPLE_SEED + 1):
        torch.manual_seed(seed)
        try:
            results.append(_to_cpu(call()))
        except Exception:  # e.g. a copy loses what the sample's storage holds beyond its view (as_strided)
            return False
    try:
        torch.testing.assert_close(results[0], results[1], equal_nan=True)
    except AssertionError:
        return True
    return False


def cpu_samples(op, dtype: torch.dtype) -> list:
    torch.manual_seed(SAMPLE_SEED)
    requires_grad = op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")
    return list(op.sample_inputs("cpu", dtype, requires_grad=requires_grad))


def check_op(op, dtype: torch.dtype, device: str, limit: Optional[int] = None) -> List[SampleOutcome]:
    """The outcome of every sample of `op` in `dtype` (of the first `limit` when given).

    A sample that differs from the CPU is skipped, not failed, when the CPU's
    result is no reference for it: the OpInfo says so (uninitialized memory,
    undefined order), or the CPU's own result changes with the seed.
    """
    not_comparable = declared_skip(op, dtype)
    tolerance = tolerance_for(op, dtype)
    return [
        outcome_of(
            index,
            lambda: check_sample(op, sample, device, tolerance),
            not_comparable,
            lambda: _call(op, _detached_copy(sample)),
        )
        for index, sample in enumerate(cpu_samples(op, dtype)[:limit])
    ]


def outcome_of(index: int, check: Callable[[], None], not_comparable: Optional[str], cpu_call: Callable) -> SampleOutcome:
    """Runs `check` (which raises AssertionError on a difference from the CPU) and classifies it.

    A difference is a skip when the CPU's result is no reference: the test
    info says so (`not_comparable`), or `cpu_call`'s result changes with the seed.
    """
    try:
        check()
        return SampleOutcome(index, "passed")
    except AssertionError as error:
        if not_comparable is not None:
            return SampleOutcome(index, "skipped", not_comparable)
        if is_random(cpu_call):
            return SampleOutcome(index, "skipped", "random: the CPU's values change with the seed")
        return SampleOutcome(index, "failed", str(error))
    except Exception as error:  # a harness error is a failure too, with its reason
        return SampleOutcome(index, "failed", f"{type(error).__name__}: {error}")
