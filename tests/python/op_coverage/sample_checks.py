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

import oracles

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
    # False where the CPU's values are no reference: only what the results
    # are (structure, shapes, dtypes, device) is compared.
    values: bool = True


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


def _names_the_cpu(value: Any) -> bool:
    """Whether `value` is a device argument naming the CPU ("cpu", "cpu:0" or a torch.device)."""
    if isinstance(value, torch.device):
        return value.type == "cpu"
    return isinstance(value, str) and value in ("cpu", "cpu:0")


def _moved_view(view: torch.Tensor, bases: dict, device: str) -> Optional[torch.Tensor]:
    """`view` on `device` as a view of its base moved there, with the same sizes, strides and offset.

    Ops like as_strided read the storage around a view, and autograd treats a
    view of a tensor that requires grad as part of its base's graph: copying
    the view alone loses both. `bases` maps id(base) to the base on the device,
    so views sharing a base share it there too. None when the view cannot be
    rebuilt from its base's memory (a view of another dtype, other than the
    real part of a complex tensor).
    """
    base = view._base
    storage_view = base
    if view.dtype != base.dtype:
        if not (base.is_complex() and view.dtype == base.real.dtype):
            return None
        storage_view = torch.view_as_real(base)
    # A lazily conjugated or negated view (x.mH) reads its memory through
    # bits as_strided does not carry over.
    if storage_view.storage_offset() != 0 or any(t.is_conj() or t.is_neg() for t in (base, view)):
        return None
    if id(base) not in bases:
        bases[id(base)] = base.detach().to(device).requires_grad_(base.requires_grad)
    moved_base = bases[id(base)]
    # SampleInput.transform moves under no_grad. A view made with grad mode on
    # is in its base's graph; one made under no_grad (as OpInfos make most
    # samples) is not, and autograd gives it no gradient: the same here.
    with torch.set_grad_enabled(view.grad_fn is not None):
        memory = torch.view_as_real(moved_base) if storage_view is not base else moved_base
        moved = memory.as_strided(view.size(), view.stride(), view.storage_offset())
    if view.requires_grad and not moved.requires_grad:
        moved.requires_grad_(True)
    return moved


def to_device(device: str, keep_on_cpu: frozenset = frozenset()) -> Callable:
    """Moves a sample's values to `device` as PyTorch's device tests make them there.

    Tensors go to the device, views as views of their base; tensors whose
    position (in the order SampleInput.transform visits them) is in
    `keep_on_cpu` stay on the CPU, where the OpInfo makes them on every device
    (tensor_split's indices).
    """
    bases: dict = {}
    position = iter(range(1 << 30))

    def move(value):
        # SampleInput.transform passes dtypes too.
        if not isinstance(value, torch.Tensor):
            return value
        if next(position) in keep_on_cpu:
            return value.detach().clone().requires_grad_(value.requires_grad)
        if value._base is not None:
            moved = _moved_view(value, bases, device)
            if moved is not None:
                return moved
        moved = value.detach().to(device)
        return moved.requires_grad_(value.requires_grad)

    return move


def _renamed_devices(value: Any, device: str) -> Any:
    """`value` with every argument naming the CPU as a device naming `device`
    (the OpInfo names the device the samples are made for: `to`'s positional one)."""
    if _names_the_cpu(value):
        return device
    if isinstance(value, (list, tuple)):
        return type(value)(_renamed_devices(each, device) for each in value)
    if isinstance(value, dict):
        return {key: _renamed_devices(each, device) for key, each in value.items()}
    return value


def _on_device(sample, device: str, keep_on_cpu: frozenset = frozenset()):
    moved = sample.transform(to_device(device, keep_on_cpu))
    moved.args = _renamed_devices(moved.args, device)
    moved.kwargs = _renamed_devices(moved.kwargs, device)
    # Factory ops name the device in their keyword arguments.
    if isinstance(moved.kwargs.get("device"), (str, torch.device)):
        moved.kwargs["device"] = device
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


def _compare_structure(device_result: Any, cpu_result: Any, what: str) -> None:
    """Raises AssertionError when the results differ in anything but their values."""
    device_leaves, device_spec = tree_flatten(device_result)
    cpu_leaves, cpu_spec = tree_flatten(cpu_result)
    if device_spec != cpu_spec:
        raise AssertionError(f"{what}: openreg returns {device_spec}, the CPU {cpu_spec}")
    for device_leaf, cpu_leaf in zip(device_leaves, cpu_leaves):
        if isinstance(cpu_leaf, torch.Tensor) != isinstance(device_leaf, torch.Tensor):
            raise AssertionError(f"{what}: openreg returns {type(device_leaf)}, the CPU {type(cpu_leaf)}")
        if isinstance(cpu_leaf, torch.Tensor) and (
            device_leaf.shape != cpu_leaf.shape or device_leaf.dtype != cpu_leaf.dtype
        ):
            raise AssertionError(
                f"{what}: openreg returns a {device_leaf.dtype} tensor of shape {list(device_leaf.shape)}, "
                f"the CPU a {cpu_leaf.dtype} tensor of shape {list(cpu_leaf.shape)}"
            )


def compare(device_result: Any, cpu_result: Any, tolerance: Tolerance, what: str) -> None:
    """Raises AssertionError naming `what` when the results differ (only in their values
    when `tolerance.values`)."""
    wrong = _wrong_devices(device_result)
    cpu_leaves = [leaf for leaf in tree_flatten(cpu_result)[0] if isinstance(leaf, torch.Tensor)]
    if wrong and len(cpu_leaves) > 0:
        raise AssertionError(f"{what}: results on {wrong} instead of openreg")
    if not tolerance.values:
        _compare_structure(device_result, cpu_result, what)
        return
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


def _check_out(op, cpu_sample, device: str, cpu_result, tolerance: Tolerance, keep_on_cpu: frozenset) -> None:
    leaves = tree_flatten(cpu_result)[0]
    if not leaves or not all(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return
    cpu_copy = _detached_copy(cpu_sample)
    device_copy = _on_device(cpu_copy, device, keep_on_cpu)
    cpu_out = _out_like(_to_cpu(cpu_result), "cpu")
    # Both sides' out= tensors start with the same contents: some CPU out=
    # kernels read them (fft.ihfftn's, for 1-D and last-dimension transforms,
    # whose out= result then differs from the functional one), and openreg
    # runs those kernels too.
    out = tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, cpu_out)

    def device_call():
        _call(op, device_copy, out=out)
        return out

    def cpu_call():
        _call(op, cpu_copy, out=cpu_out)
        return cpu_out

    check_call(cpu_call, device_call, tolerance, "out=")


def _check_inplace(op, cpu_sample, device: str, tolerance: Tolerance, keep_on_cpu: frozenset) -> None:
    inplace = op.get_inplace()
    cpu_copy = _detached_copy(cpu_sample)
    device_copy = _on_device(cpu_copy, device, keep_on_cpu)
    cpu_copy = _detached_copy(cpu_copy)

    def run(sample):
        def call():
            result = _call(inplace, sample)
            return result, sample.input

        return call

    check_call(run(cpu_copy), run(device_copy), tolerance, "in-place")


def check_sample(op, cpu_sample, device: str, tolerance: Tolerance, keep_on_cpu: frozenset = frozenset()) -> None:
    """Raises AssertionError describing the first check `cpu_sample` fails on openreg.

    `keep_on_cpu`: the positions of the sample's tensors the OpInfo makes on
    the CPU on every device (`cpu_pinned_tensors`).
    """
    device_sample = _on_device(cpu_sample, device, keep_on_cpu)
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
        _check_out(op, cpu_sample, device, cpu_result, tolerance, keep_on_cpu)
    if op.get_inplace() is not None and isinstance(cpu_sample.input, torch.Tensor):
        _check_inplace(op, cpu_sample, device, tolerance, keep_on_cpu)


class NotCovered(Exception):
    """Part of a sample's contract has no oracle: the sample stays skipped."""


def _cpu_raises(fn: Callable) -> bool:
    return _run(fn)[1] is not None


def check_by_property(op, oracle: oracles.Oracle, cpu_sample, device: str, tolerance: Tolerance, keep_on_cpu: frozenset = frozenset()) -> None:
    """Checks every call of `cpu_sample` on openreg with `oracle` instead of the CPU's values.

    The functional call, its gradients (when the op supports autograd and the
    sample has inputs that require grad), and the out= and in-place variants
    where the OpInfo declares them and the CPU runs them (where the CPU raises,
    check_sample without values has already made sure openreg raises too).
    Each result must have the CPU's structure on openreg and hold the oracle.
    Raises AssertionError on a result that does not, NotCovered when the
    sample has gradients and the oracle none.
    """
    inputs = _detached_copy(cpu_sample)
    reference = _call(op, _detached_copy(cpu_sample))
    structure = dataclasses.replace(tolerance, values=False)

    def case(result, **gradients) -> oracles.Case:
        return oracles.Case(inputs.input, inputs.args, inputs.kwargs, result, reference, tolerance.atol, tolerance.rtol, **gradients)

    def holds(result, what: str, **gradients) -> None:
        compare(result, reference, structure, what)
        try:
            oracle.check(case(result, **gradients))
            if gradients:
                oracle.gradients(case(result, **gradients))
        except AssertionError as error:
            raise AssertionError(f"{what}: {error}") from None

    device_sample = _on_device(cpu_sample, device, keep_on_cpu)
    with_gradients = op.supports_autograd and bool(_grad_inputs(device_sample))
    result = _on_openreg(lambda: _call(op, device_sample))()
    outputs = _differentiable_outputs(device_sample.output_process_fn_grad(result)) if with_gradients else []
    if outputs and oracle.gradients is None:
        raise NotCovered("its gradients have no oracle")
    if outputs:
        torch.manual_seed(SAMPLE_SEED)
        cotangents = [torch.randn(o.shape, dtype=o.dtype) for o in outputs]
        gradients = torch.autograd.grad(outputs, _grad_inputs(device_sample), [c.to(device) for c in cotangents], allow_unused=True)
        gradients = [g.detach().cpu() if g is not None else None for g in gradients]
        holds(result, "result", cotangents=cotangents, gradients=gradients)
    else:
        holds(result, "result")
    if op.supports_out and all(isinstance(leaf, torch.Tensor) for leaf in tree_flatten(reference)[0]):
        cpu_out = _out_like(reference, "cpu")
        if not _cpu_raises(lambda: _call(op, _detached_copy(cpu_sample), out=cpu_out)):
            out = _out_like(reference, device)
            out_sample = _on_device(_detached_copy(cpu_sample), device, keep_on_cpu)
            _on_openreg(lambda: _call(op, out_sample, out=out))()
            holds(out, "out=")
    inplace = op.get_inplace()
    if inplace is not None and isinstance(cpu_sample.input, torch.Tensor):
        if not _cpu_raises(lambda: _call(inplace, _detached_copy(cpu_sample))):
            inplace_sample = _on_device(_detached_copy(cpu_sample), device, keep_on_cpu)
            _on_openreg(lambda: _call(inplace, inplace_sample))()
            holds(inplace_sample.input, "in-place")


def is_random(call: Callable[[], Any]) -> bool:
    """Whether the results of `call` (on the CPU) depend on the random seed.

    Some OpInfos seed the generator inside their op (wrapper_set_seed's
    torch.manual_seed(42), for randn or alpha_dropout), so their CPU values
    repeat whatever the seed before the call: every seed the call sets is
    shifted too, by the same amount as the seed set here.
    """
    results = []
    manual_seed = torch.manual_seed
    for shift in (0, 1):
        manual_seed(SAMPLE_SEED + shift)
        torch.manual_seed = lambda seed, shift=shift: manual_seed(seed + shift)
        try:
            results.append(_to_cpu(call()))
        except Exception:  # e.g. a copy loses what the sample's storage holds beyond its view (as_strided)
            return False
        finally:
            torch.manual_seed = manual_seed
    try:
        torch.testing.assert_close(results[0], results[1], equal_nan=True)
    except AssertionError:
        return True
    return False


def _requires_grad(op, dtype: torch.dtype) -> bool:
    return op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")


def cpu_samples(op, dtype: torch.dtype) -> list:
    torch.manual_seed(SAMPLE_SEED)
    return list(op.sample_inputs("cpu", dtype, requires_grad=_requires_grad(op, dtype)))


def _tensors(sample) -> List[torch.Tensor]:
    """The sample's tensors in the order SampleInput.transform visits them."""
    found = []
    sample.transform(lambda value: found.append(value) if isinstance(value, torch.Tensor) else None)
    return found


def _has_integer_arguments(sample) -> bool:
    leaves = tree_flatten((sample.args, sample.kwargs))[0]
    return any(isinstance(leaf, torch.Tensor) and not leaf.is_floating_point() and not leaf.is_complex() for leaf in leaves)


def cpu_pinned_tensors(op, dtype: torch.dtype, samples: list) -> List[frozenset]:
    """For each sample, the positions of the tensors the OpInfo makes on the CPU for every device.

    PyTorch's device tests make the samples on the device, and an OpInfo
    keeps some arguments on the CPU there (tensor_split's indices, which it
    takes only on the CPU): the sample function makes them without its
    device. Making the samples on the meta device shows which: they come out
    on the CPU. Only index arguments are made so, so only OpInfos whose
    samples have integer tensor arguments are asked; an OpInfo whose samples
    cannot be made on the meta device keeps all on the device.
    """
    none = [frozenset()] * len(samples)
    if not any(_has_integer_arguments(sample) for sample in samples):
        return none
    try:
        meta = list(op.sample_inputs("meta", dtype, requires_grad=_requires_grad(op, dtype)))
    except Exception:  # a sample function that reads values: nothing is known
        return none
    if len(meta) != len(samples):
        return none
    pinned = []
    for meta_sample, sample in zip(meta, samples):
        meta_tensors, tensors = _tensors(meta_sample), _tensors(sample)
        if len(meta_tensors) != len(tensors):
            pinned.append(frozenset())
            continue
        pinned.append(frozenset(i for i, tensor in enumerate(meta_tensors) if tensor.device.type == "cpu"))
    return pinned


def check_op(op, dtype: torch.dtype, device: str, limit: Optional[int] = None) -> List[SampleOutcome]:
    """The outcome of every sample of `op` in `dtype` (of the first `limit` when given).

    A sample that differs from the CPU is skipped, not failed, when the CPU's
    result is no reference for it: the OpInfo says so (uninitialized memory,
    undefined order), or the CPU's own result changes with the seed.
    """
    not_comparable = declared_skip(op, dtype)
    tolerance = tolerance_for(op, dtype)
    without_values = dataclasses.replace(tolerance, values=False)
    # The meta samples line up with the whole list, not with its first `limit`.
    all_samples = cpu_samples(op, dtype)
    pinned = cpu_pinned_tensors(op, dtype, all_samples)[:limit]
    samples = all_samples[:limit]
    oracle = oracles.ORACLES.get(op.full_name)
    return [
        outcome_of(
            index,
            lambda: check_sample(op, sample, device, tolerance, keep_on_cpu),
            not_comparable,
            lambda: _call(op, _detached_copy(sample)),
            lambda: check_sample(op, sample, device, without_values, keep_on_cpu),
            oracle and (oracle.kind, lambda: check_by_property(op, oracle, sample, device, tolerance, keep_on_cpu)),
        )
        for index, (sample, keep_on_cpu) in enumerate(zip(samples, pinned))
    ]


def outcome_of(
    index: int,
    check: Callable[[], None],
    not_comparable: Optional[str],
    cpu_call: Callable,
    check_without_values: Optional[Callable[[], None]] = None,
    by_property: Optional[Tuple[str, Callable[[], None]]] = None,
) -> SampleOutcome:
    """Runs `check` (which raises AssertionError on a difference from the CPU) and classifies it.

    A difference is a skip when the CPU's result is no reference: the test
    info says so (`not_comparable`), or `cpu_call`'s result changes with the
    seed. Then `check_without_values`, when given, must still pass: openreg
    raises where the CPU does and returns results of the same structure,
    shapes, dtypes, on openreg; otherwise the sample fails. Then `by_property`
    (the oracle's kind and check_by_property), when given, decides: the sample
    passes, "checked by property: <kind>", when every result holds the oracle,
    fails when one does not, and stays skipped when part of it has no oracle.
    """
    try:
        check()
        return SampleOutcome(index, "passed")
    except AssertionError as error:
        if not_comparable is not None:
            reason = not_comparable
        elif is_random(cpu_call):
            reason = "random: the CPU's values change with the seed"
        else:
            return SampleOutcome(index, "failed", str(error))
        if check_without_values is not None:
            try:
                check_without_values()
            except AssertionError as other:
                return SampleOutcome(index, "failed", f"{other} (values not compared: {reason})")
            except Exception as other:  # a harness error is a failure too, with its reason
                return SampleOutcome(index, "failed", f"{type(other).__name__}: {other}")
        if by_property is not None:
            kind, check_property = by_property
            try:
                check_property()
                return SampleOutcome(index, "passed", f"checked by property: {kind}")
            except NotCovered as gap:
                return SampleOutcome(index, "skipped", f"{reason} ({gap})")
            except AssertionError as other:
                return SampleOutcome(index, "failed", f"{other} (checked by property: {kind})")
            except Exception as other:  # a harness error is a failure too, with its reason
                return SampleOutcome(index, "failed", f"{type(other).__name__}: {other} (checked by property: {kind})")
        return SampleOutcome(index, "skipped", reason)
    except Exception as error:  # a harness error is a failure too, with its reason
        return SampleOutcome(index, "failed", f"{type(error).__name__}: {error}")
