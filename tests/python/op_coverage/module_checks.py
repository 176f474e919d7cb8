"""Runs one ModuleInfo's inputs on the CPU and on openreg and compares them.

The counterpart of sample_checks.check_op for torch's module database
(common_modules.module_db), as PyTorch's TestModule.test_cpu_gpu_parity
does it for CUDA: every input is made on the CPU under a fixed seed and
copied to the device; the module is built on each side from the same seed
and the device one then gets the CPU one's parameters and buffers, so both
start equal (lazy modules after a first call has made them). An input passes
when the forward results match and so do the gradients of the inputs and of
every parameter, for cotangents drawn on the CPU.
"""

from typing import Any, List, Optional, Tuple

import torch
from torch.testing._internal.common_modules import FunctionInput
from torch.utils._pytree import tree_flatten, tree_map

import sample_checks
from sample_checks import SampleOutcome, Tolerance

# TestModule.test_cpu_gpu_parity compares with TestCase.assertEqual's
# default tolerance for the dtype, loosened by the ModuleInfo's overrides.
MODULE_DB_COMPARISON = sample_checks.CpuComparison("ModuleInfo", ("TestModule", "test_cpu_gpu_parity"), None)


def cpu_inputs(module_info, dtype: torch.dtype, training: bool) -> list:
    torch.manual_seed(sample_checks.SAMPLE_SEED)
    return list(module_info.module_inputs_func(module_info, device="cpu", dtype=dtype, requires_grad=True, training=training))


def _moved(value: Any, device: str) -> Any:
    """`value` with its tensors on `device`; a tensor that appears twice (KLDivLoss's scalar input is
    its own target) is moved once, so gradients flow into one tensor as on the CPU."""
    move = sample_checks.to_device(device)
    moved = {}

    def move_once(leaf):
        if not isinstance(leaf, torch.Tensor):
            return leaf
        if id(leaf) not in moved:
            moved[id(leaf)] = move(leaf)
        return moved[id(leaf)]

    return tree_map(move_once, value)


def _moved_input(function_input, device: str):
    args, kwargs = _moved((function_input.args, function_input.kwargs), device)
    return FunctionInput(*args, **kwargs)


def _build(module_info, constructor, dtype: torch.dtype, device: str, training: bool) -> torch.nn.Module:
    torch.manual_seed(sample_checks.SAMPLE_SEED)
    args, kwargs = _moved((constructor.args, constructor.kwargs), device)
    module = module_info.module_cls(*args, **kwargs).to(dtype).to(device)
    module.train(training)
    return module


def _states(module: torch.nn.Module) -> List[torch.Tensor]:
    return list(module.parameters()) + [buffer for buffer in module.buffers() if buffer is not None]


def _twin_modules(module_info, module_input, dtype, training, device_args) -> Tuple[torch.nn.Module, torch.nn.Module]:
    """The CPU module and its openreg twin with the same parameters and buffers."""
    cpu_module = _build(module_info, module_input.constructor_input, dtype, "cpu", training)
    device_module = _build(module_info, module_input.constructor_input, dtype, "openreg", training)
    if module_info.is_lazy:
        # The first call gives a lazy module its parameters; it changes no buffers (lazy modules have none).
        with torch.no_grad():
            _forward(cpu_module, module_input.forward_input)
            _forward(device_module, device_args)
    with torch.no_grad():
        for cpu_state, device_state in zip(_states(cpu_module), _states(device_module)):
            device_state.copy_(cpu_state)
    return cpu_module, device_module


def _forward(module: torch.nn.Module, forward_input) -> Any:
    return module(*forward_input.args, **forward_input.kwargs)


def _gradients(module: torch.nn.Module, forward_input, outputs: List[torch.Tensor], cotangents) -> List[Optional[torch.Tensor]]:
    """Gradients of the inputs that require them, then of every parameter, in order."""
    leaves = [
        leaf
        for leaf in tree_flatten((forward_input.args, forward_input.kwargs))[0]
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad
    ]
    leaves += [p for p in module.parameters() if p.requires_grad]
    if not leaves:
        return []
    return list(torch.autograd.grad(outputs, leaves, cotangents, allow_unused=True))


def _differentiable(result: Any) -> List[torch.Tensor]:
    return [
        leaf
        for leaf in tree_flatten(result)[0]
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad and leaf.is_floating_point()
    ]


def check_input(module_info, module_input, dtype: torch.dtype, training: bool, tolerance: Tolerance) -> None:
    """Raises AssertionError describing the first check `module_input` fails on openreg."""
    device_args = _moved_input(module_input.forward_input, "openreg")
    cpu_module, device_module = _twin_modules(module_info, module_input, dtype, training, device_args)
    results = {}

    def device_forward():
        results["device"] = _forward(device_module, device_args)
        return results["device"]

    cpu_result = sample_checks.check_call(
        lambda: _forward(cpu_module, module_input.forward_input), device_forward, tolerance, "forward"
    )
    if cpu_result is None:
        return
    cpu_outputs = _differentiable(cpu_result)
    if not cpu_outputs:
        return
    torch.manual_seed(sample_checks.SAMPLE_SEED)
    cotangents = [torch.randn_like(output) for output in cpu_outputs]
    device_cotangents = [c.to("openreg") for c in cotangents]
    sample_checks.check_call(
        lambda: _gradients(cpu_module, module_input.forward_input, cpu_outputs, cotangents),
        lambda: _gradients(device_module, device_args, _differentiable(results["device"]), device_cotangents),
        tolerance,
        "gradients (inputs, then parameters)",
    )
    # Training updates buffers (BatchNorm's running statistics) too.
    sample_checks.compare(list(device_module.buffers()), list(cpu_module.buffers()), tolerance, "buffers")


def _cpu_forward(module_info, module_input, dtype, training) -> Any:
    """A forward of a new CPU module, drawing from the generator as the caller seeded it (the module
    itself is built from the fixed seed), for telling whether results depend on the seed."""
    state = torch.get_rng_state()
    module = _build(module_info, module_input.constructor_input, dtype, "cpu", training)
    torch.set_rng_state(state)
    return _forward(module, module_input.forward_input)


def check_module(module_info, dtype: torch.dtype, training: bool) -> List[SampleOutcome]:
    """The outcome of every input of `module_info` in `dtype` and mode."""
    not_comparable = sample_checks.declared_skip(module_info, dtype, MODULE_DB_COMPARISON)
    tolerance = sample_checks.tolerance_for(module_info, dtype, MODULE_DB_COMPARISON)
    return [
        sample_checks.outcome_of(
            index,
            lambda: check_input(module_info, module_input, dtype, training, tolerance),
            not_comparable,
            lambda: _cpu_forward(module_info, module_input, dtype, training),
        )
        for index, module_input in enumerate(cpu_inputs(module_info, dtype, training))
    ]
