"""torch.openreg.make_graphed_callables: a callable whose forward and backward are each one graph replay.

The counterpart of torch.cuda.make_graphed_callables, built on torch.openreg.Graph
(docs/graphs.md, "Graphed callables"). For every callable, the forward work and
the backward work (the gradients of its outputs with respect to its tensor
arguments and trainable parameters) are captured into two graphs that share one
memory pool. The returned callable is a single autograd node: its forward copies
the arguments into the forward graph's static inputs and replays it, its backward
copies the incoming gradients into the backward graph's static inputs and replays
that. Outputs and gradients are the graphs' static tensors, overwritten by the
next replay, as on CUDA.
"""

import dataclasses
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import torch
from torch.utils import _pytree

from torch_openreg.openreg.graphs import Graph, graph, graph_pool_handle

__all__ = ["make_graphed_callables"]

ModuleOrCallable = Union[torch.nn.Module, Callable[..., Any]]


@dataclasses.dataclass
class _CapturedCallable:
    """One callable's two graphs and the static tensors they read and write."""

    forward_graph: Graph
    backward_graph: Graph
    # The tensor arguments, then the trainable parameters: the autograd node's inputs.
    static_inputs: Tuple[torch.Tensor, ...]
    static_outputs: Tuple[torch.Tensor, ...]
    output_spec: _pytree.TreeSpec
    # One per static output; None where the output needs no gradient.
    static_grad_outputs: Tuple[Optional[torch.Tensor], ...]
    # One per static input; None where the input needs no gradient.
    static_grad_inputs: Tuple[Optional[torch.Tensor], ...]


def make_graphed_callables(
    callables: Union[ModuleOrCallable, Tuple[ModuleOrCallable, ...]],
    sample_args: Union[Tuple[torch.Tensor, ...], Tuple[Tuple[torch.Tensor, ...], ...]],
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: Optional[Tuple[int, int]] = None,
) -> Union[ModuleOrCallable, Tuple[ModuleOrCallable, ...]]:
    """Returns graphed versions of `callables` (torch.cuda.make_graphed_callables' arguments and rules).

    `sample_args` holds one tuple of openreg tensors per callable (one tuple when
    a single callable is given); the graphed callable must later be called with
    tensors of the same shapes, dtypes and requires_grad. Several callables are
    captured in the order given and share one memory pool, so they must run in
    that order. A graphed Module runs its graphs in the training mode it was
    captured in and its own forward in the other mode.
    """
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)
    _check_arguments(callables, sample_args, num_warmup_iters)

    inputs_per_callable = [
        tuple(args) + _trainable_parameters(function) for function, args in zip(callables, sample_args)
    ]
    _warm_up(callables, sample_args, inputs_per_callable, num_warmup_iters, allow_unused_input)

    memory_pool = pool if pool is not None else graph_pool_handle()
    forward_graphs = [Graph() for _ in callables]
    outputs_per_callable = []
    for function, args, forward_graph in zip(callables, sample_args, forward_graphs):
        with graph(forward_graph, pool=memory_pool):
            outputs_per_callable.append(_pytree.tree_flatten(function(*args)))

    # Backward graphs are captured in reverse order, the order in which a
    # training step's backward runs them, so that their pool use is the
    # step's.
    captured: List[Optional[_CapturedCallable]] = [None] * len(callables)
    for index in reversed(range(len(callables))):
        flat_outputs, output_spec = outputs_per_callable[index]
        captured[index] = _capture_backward(
            forward_graphs[index], inputs_per_callable[index], tuple(flat_outputs), output_spec,
            memory_pool, allow_unused_input)

    graphed = []
    for function, args, record in zip(callables, sample_args, captured):
        graphed.append(_graphed_version(function, len(args), record))
    return graphed[0] if single else tuple(graphed)


def _check_arguments(callables: Sequence[Any], sample_args: Sequence[Any], num_warmup_iters: int) -> None:
    if torch.is_autocast_enabled("openreg") and torch.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables: autocast's weight cache is enabled, but a captured graph cannot reuse "
            "cast weights across replays; use torch.autocast('openreg', cache_enabled=False)")
    if not isinstance(sample_args, tuple) or len(sample_args) != len(callables):
        raise ValueError(
            f"make_graphed_callables: expected one tuple of sample arguments per callable ({len(callables)}), "
            f"found {type(sample_args).__name__} of length {len(sample_args) if hasattr(sample_args, '__len__') else '?'}; "
            "pass a tuple of tensors for one callable, a tuple of such tuples for several")
    if not isinstance(num_warmup_iters, int) or num_warmup_iters < 0:
        raise ValueError(f"make_graphed_callables: num_warmup_iters must be an int >= 0, found {num_warmup_iters!r}")
    for position, (function, args) in enumerate(zip(callables, sample_args)):
        where = f"make_graphed_callables: callable {position}"
        if not callable(function):
            raise TypeError(f"{where} is a {type(function).__name__}, expected a Module or a function")
        if not isinstance(args, tuple):
            raise TypeError(f"{where}: expected its sample arguments as a tuple of tensors, found "
                            f"{type(args).__name__}")
        for index, arg in enumerate(args):
            if not isinstance(arg, torch.Tensor):
                raise TypeError(f"{where}: sample argument {index} is a {type(arg).__name__}; only tensors can "
                                "be graph inputs (capture other values inside the callable instead)")
            if arg.device.type != "openreg":
                raise ValueError(f"{where}: sample argument {index} is on {arg.device}, expected an openreg "
                                 "tensor; move it with .to('openreg')")
        if isinstance(function, torch.nn.Module):
            hooks = [name for name in ("_backward_hooks", "_forward_hooks", "_forward_pre_hooks")
                     if getattr(function, name)]
            if hooks:
                raise RuntimeError(f"{where}: the Module has hooks registered ({', '.join(hooks)}), which "
                                   "capture cannot record; register them after make_graphed_callables")
            for name, buffer in function.named_buffers():
                if buffer.requires_grad:
                    raise RuntimeError(f"{where}: buffer '{name}' requires grad; only parameters may be trainable "
                                       "in a graphed Module")


def _trainable_parameters(function: ModuleOrCallable) -> Tuple[torch.Tensor, ...]:
    if not isinstance(function, torch.nn.Module):
        return ()
    return tuple(p for p in function.parameters() if p.requires_grad)


def _differentiable(tensors: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    return [t for t in tensors if isinstance(t, torch.Tensor) and t.requires_grad]


def _warm_up(callables, sample_args, inputs_per_callable, num_warmup_iters: int, allow_unused_input: bool) -> None:
    """Runs every callable's forward and backward on a side stream before capture, as CUDA advises:
    lazy initialization (workspaces, autograd's device threads) must not happen while capturing."""
    torch.openreg.synchronize()
    side = torch.openreg.Stream()
    with torch.openreg.stream(side):
        for function, args, inputs in zip(callables, sample_args, inputs_per_callable):
            for _ in range(num_warmup_iters):
                outputs = _differentiable(_pytree.tree_leaves(function(*args)))
                wanted = _differentiable(inputs)
                if outputs and wanted:
                    torch.autograd.grad(outputs, wanted, grad_outputs=[torch.ones_like(o) for o in outputs],
                                        allow_unused=allow_unused_input)
    torch.openreg.synchronize()


def _capture_backward(forward_graph: Graph, static_inputs, static_outputs, output_spec, memory_pool,
                      allow_unused_input: bool) -> _CapturedCallable:
    static_grad_outputs = tuple(torch.empty_like(o) if o.requires_grad else None for o in static_outputs)
    wanted = _differentiable(static_inputs)
    backward_graph = Graph()
    with graph(backward_graph, pool=memory_pool):
        pairs = [(o, g) for o, g in zip(static_outputs, static_grad_outputs) if g is not None]
        grads = ()
        if pairs and wanted:
            grads = torch.autograd.grad([o for o, _ in pairs], wanted, grad_outputs=[g for _, g in pairs],
                                        allow_unused=allow_unused_input)
    grads_by_input = iter(grads)
    static_grad_inputs = tuple(next(grads_by_input, None) if i.requires_grad else None for i in static_inputs)
    return _CapturedCallable(forward_graph, backward_graph, tuple(static_inputs),
                             tuple(o.detach() for o in static_outputs), output_spec, static_grad_outputs,
                             static_grad_inputs)


def _copy_into(static: torch.Tensor, given: torch.Tensor) -> None:
    # Parameters are their own static inputs: copying them onto themselves
    # would only cost time.
    if given.data_ptr() != static.data_ptr():
        static.copy_(given)


def _graphed_version(function: ModuleOrCallable, argument_count: int, record: _CapturedCallable):
    class Replay(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for static, given in zip(record.static_inputs, inputs):
                _copy_into(static, given)
            record.forward_graph.replay()
            # Fresh aliases each call: autograd gives a Function's outputs its
            # node, and the static tensors must stay free of any one call's.
            outputs = tuple(o.detach() for o in record.static_outputs)
            ctx.mark_non_differentiable(*(o for o, g in zip(outputs, record.static_grad_outputs) if g is None))
            return outputs

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grad_outputs):
            for static, given in zip(record.static_grad_outputs, grad_outputs):
                if static is not None:
                    _copy_into(static, given)
            record.backward_graph.replay()
            return tuple(g.detach() if g is not None else None for g in record.static_grad_inputs)

    parameters = record.static_inputs[argument_count:]

    def graphed(*args):
        if len(args) != argument_count:
            raise TypeError(f"graphed callable: expected the {argument_count} tensor arguments it was captured "
                            f"with, found {len(args)}")
        for index, (arg, static) in enumerate(zip(args, record.static_inputs)):
            if (not isinstance(arg, torch.Tensor) or arg.shape != static.shape or arg.dtype != static.dtype
                    or arg.device != static.device):
                found = (f"{type(arg).__name__}" if not isinstance(arg, torch.Tensor)
                         else f"{arg.dtype} {tuple(arg.shape)} on {arg.device}")
                raise ValueError(f"graphed callable: argument {index} must match its sample "
                                 f"({static.dtype} {tuple(static.shape)} on {static.device}), found {found}; "
                                 "graph again for other shapes")
        outputs = Replay.apply(*args, *parameters)
        return _pytree.tree_unflatten(list(outputs), record.output_spec)

    if not isinstance(function, torch.nn.Module):
        return graphed

    captured_training = function.training
    eager_forward = function.forward

    def forward(*args):
        if function.training == captured_training:
            return graphed(*args)
        return eager_forward(*args)

    function.forward = forward
    return function
