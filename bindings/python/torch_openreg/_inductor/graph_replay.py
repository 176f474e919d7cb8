"""mode="reduce-overhead" on openreg: every compiled graph is replayed from a torch.openreg.Graph.

Inductor's own graph support (cudagraph trees) is CUDA's throughout, so
openreg wraps each compiled graph (AOTAutograd's forward and backward are
two) in a `GraphReplayer` instead (docs/compile.md, `mode="reduce-overhead"`).
Per input shape it runs the graph once uncaptured (warm-up), then captures
it into a torch.openreg.Graph in the device's shared memory pool and
replays that. `register` hooks the three places where Inductor decides
about graphs; each hook handles openreg graphs and leaves everything else
to Inductor's function unchanged.

State: a replayer belongs to its compiled graph; `stats` and the pools are
process-wide and touched only by the threads that call compiled graphs
while holding the GIL (the forward's thread and autograd's device thread).
"""

import collections
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch._inductor import config
from torch._inductor import cudagraph_utils, output_code
from torch._inductor.utils import BoxedBool

from torch_openreg.openreg import synchronize
from torch_openreg.openreg.graphs import Graph, graph, graph_pool_handle, is_current_stream_capturing

perf_hint_log = torch._logging.getArtifactLogger(__name__, "perf_hints")

# Counts of captures, replays and uncaptured runs, over every compiled openreg
# graph of the process (the tests read them; nothing else does).
stats: collections.Counter = collections.Counter()
# The latest reasons why openreg graphs ran uncaptured, newest last.
skip_reasons: collections.deque = collections.deque(maxlen=32)

# How many input shapes one compiled graph captures before running new shapes
# uncaptured: every capture keeps its memory reserved (docs/graphs.md), so an
# unbounded number of shapes would grow the pool without bound. Inductor's
# own bound on shapes (cudagraph trees warn beyond it) when it has one.
DEFAULT_SHAPE_LIMIT = 8

# One memory pool per device, shared by every captured graph on it, forward and
# backward alike, as cudagraph trees share one per device.
_pools: Dict[int, Tuple[int, int]] = {}


def _step_mark() -> int:
    """Changes whenever torch.compiler.cudagraph_mark_step_begin() is called."""
    from torch._inductor.cudagraph_trees import MarkStepBox  # imports compile_fx: not at module import

    return MarkStepBox.mark_step_counter


def shape_limit() -> int:
    limit = config.triton.cudagraph_dynamic_shape_warn_limit
    return DEFAULT_SHAPE_LIMIT if limit is None else limit


def record_skip(reason: str) -> None:
    """Records why an openreg graph runs uncaptured, the way Inductor records cudagraph skips."""
    stats["skips"] += 1
    skip_reasons.append(reason)
    perf_hint_log.warning("openreg: %s", reason)
    cudagraph_utils.log_cudagraph_skip_and_bump_counter(f"skipping openreg graphs due to {reason}")


def _pool(device_index: int) -> Tuple[int, int]:
    pool = _pools.get(device_index)
    if pool is None:
        pool = _pools[device_index] = graph_pool_handle()
    return pool


class _Capture:
    """One input shape's graph: its static inputs, static outputs and the outputs handed out last."""

    def __init__(self, captured: Graph, static_inputs: List[Any], static_outputs: Sequence[Any],
                 copied_input_idxs: Tuple[int, ...]):
        self.graph = captured
        self.static_inputs = static_inputs
        self.static_outputs = tuple(static_outputs)
        self.copied_input_idxs = copied_input_idxs
        # One static output per storage, and how many references each storage
        # had before the last replay handed out aliases of it. Any reference
        # beyond that is a caller's: the aliases handed out, or tensors made
        # from them (`.grad` set from a backward output by autograd, a
        # `loss.detach()` kept for logging), which a tensor-level check would
        # miss.
        # Outputs that alias an input read in place (a view of a parameter
        # saved for the backward) are not this graph's memory: a replay does
        # not rewrite them. Copied inputs' buffers are: the next call copies
        # into them.
        input_memory = {i.untyped_storage().data_ptr() for index, i in enumerate(static_inputs)
                        if isinstance(i, torch.Tensor) and index not in copied_input_idxs}
        self.storages = {o.untyped_storage().data_ptr(): o for o in self.static_outputs
                         if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() not in input_memory}
        self.baseline: Dict[int, int] = {}
        self.step_mark = _step_mark()
        _live_captures.add(self)

    def use_counts(self) -> Dict[int, int]:
        return {pointer: _storage_use_count(o) for pointer, o in self.storages.items()}

    def outputs_still_alive(self, device_index: int) -> bool:
        """Whether memory of the previous replay's outputs is still referenced and no new step was marked."""
        if self.step_mark != _step_mark():
            return False
        if not self._referenced_beyond_baseline():
            return False
        # Work still queued (or run but not yet reclaimed) on an asynchronous
        # driver holds its operands too; once the device is idle, what is
        # left is the caller's.
        synchronize(device_index)
        return self._referenced_beyond_baseline()

    def _referenced_beyond_baseline(self) -> bool:
        return any(count > self.baseline.get(pointer, count) for pointer, count in self.use_counts().items())

    def add_references(self, added: Dict[int, int]) -> None:
        """Counts references another capture took to these outputs (a backward reading them) as the graph's own."""
        for pointer, count in added.items():
            if pointer in self.baseline:
                self.baseline[pointer] += count

    def replay(self, inputs: List[Any], mutated_input_idxs: Tuple[int, ...]) -> List[Any]:
        for index in self.copied_input_idxs:
            given, static = inputs[index], self.static_inputs[index]
            if given.data_ptr() != static.data_ptr():
                static.copy_(given)
        self.graph.replay()
        stats["replays"] += 1
        for index in mutated_input_idxs:
            given, static = inputs[index], self.static_inputs[index]
            if given.data_ptr() != static.data_ptr():
                given.copy_(static)
        # Fresh aliases each replay: autograd attaches its node to the tensors a
        # graph returns, and the static tensors must stay free of any one call's.
        self.baseline = self.use_counts()
        outputs = [o.detach() if isinstance(o, torch.Tensor) else o for o in self.static_outputs]
        self.step_mark = _step_mark()
        return outputs


def _storage_use_count(tensor: torch.Tensor) -> int:
    return torch._C._storage_Use_Count(tensor.untyped_storage()._cdata)


# Every capture that may hand out outputs; weak, the replayers own them.
_live_captures: "weakref.WeakSet[_Capture]" = weakref.WeakSet()


class GraphReplayer:
    """The compiled graph's callable under mode="reduce-overhead" on openreg.

    Called with Inductor's boxed convention (one list of inputs, which the
    compiled graph clears). Inputs at `static_input_idxs` (parameters,
    buffers) keep their addresses and are read in place; every other tensor
    input is copied into a static buffer before each replay, unless it
    already is that buffer (the forward's outputs the backward reads).
    """

    def __init__(self, model: Callable[[List[Any]], Any], static_input_idxs: Sequence[int], device_index: int,
                 kind: str, mutated_input_idxs: Sequence[int]):
        self.model = model
        self.static_input_idxs = frozenset(static_input_idxs)
        self.device_index = device_index
        self.kind = kind
        self.mutated_input_idxs = tuple(i for i in mutated_input_idxs if i not in self.static_input_idxs)
        self.captures: Dict[tuple, _Capture] = {}
        self.warmed_up: set = set()
        # Why this graph never captures (a capture failed, an input openreg
        # cannot keep static); None while it may.
        self.uncaptured_reason: Optional[str] = None
        self.reported_shape_limit = False

    def __call__(self, inputs: List[Any]) -> Any:
        if self.uncaptured_reason is not None or is_current_stream_capturing():
            # Inside a user's own capture the compiled graph's work is recorded
            # into that graph like any other work (docs/graphs.md).
            return self._run_uncaptured(inputs)
        key = self._key(inputs)
        if key is None:
            return self._run_uncaptured(inputs)
        capture = self.captures.get(key)
        if capture is None:
            if key not in self.warmed_up:
                # Lazy set-up (autograd's device thread, first-touch allocations)
                # must not happen while capturing, as on CUDA.
                self.warmed_up.add(key)
                return self._run_uncaptured(inputs)
            if len(self.captures) >= shape_limit():
                if not self.reported_shape_limit:
                    self.reported_shape_limit = True
                    record_skip(f"the {self.kind} graph was called with more than {shape_limit()} input shapes; "
                                "new shapes run uncaptured (torch._inductor.config.triton."
                                "cudagraph_dynamic_shape_warn_limit sets the bound)")
                return self._run_uncaptured(inputs)
            capture = self._capture(inputs)
            if capture is None:
                return self._run_uncaptured(inputs)
            self.captures[key] = capture
        elif capture.outputs_still_alive(self.device_index):
            reason = (f"the {self.kind} graph ran uncaptured because an output of its previous replay is still "
                      "referenced and a replay would overwrite it; clone outputs you keep, or call "
                      "torch.compiler.cudagraph_mark_step_begin() before each step")
            skip_reasons.append(reason)
            perf_hint_log.warning("openreg: %s", reason)
            stats["kept_outputs"] += 1
            return self._run_uncaptured(inputs)
        return capture.replay(inputs, self.mutated_input_idxs)

    def _run_uncaptured(self, inputs: List[Any]) -> Any:
        stats["uncaptured_runs"] += 1
        return self.model(inputs)

    def _key(self, inputs: List[Any]) -> Optional[tuple]:
        """What a capture depends on: shapes, strides and dtypes, ints, and the static inputs' addresses."""
        # Devices are not part of the key: Dynamo's guards keep them those of
        # the first call, and `_capture` checks them.
        key = []
        for index, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                key.append((value.shape, value.stride(), value.dtype))
                if index in self.static_input_idxs:
                    key.append(value.data_ptr())
            elif isinstance(value, (int, float, bool)):
                key.append(value)
            else:
                self._never_capture(f"input {index} of the {self.kind} graph is a {type(value).__name__}, "
                                    "which a graph cannot take")
                return None
        return tuple(key)

    def _never_capture(self, reason: str) -> None:
        self.uncaptured_reason = reason
        record_skip(reason)

    def _capture(self, inputs: List[Any]) -> Optional[_Capture]:
        # References this capture keeps to other graphs' outputs (its static
        # inputs, its recording) stay for its life: they are not a caller's.
        before = {capture: capture.use_counts() for capture in list(_live_captures)}
        try:
            return self._capture_once(inputs)
        finally:
            for capture, counts in before.items():
                now = capture.use_counts()
                capture.add_references({pointer: now[pointer] - count for pointer, count in counts.items()
                                        if now[pointer] > count})

    def _capture_once(self, inputs: List[Any]) -> Optional[_Capture]:
        static_inputs: List[Any] = []
        copied = []
        for index, value in enumerate(inputs):
            if not isinstance(value, torch.Tensor):
                static_inputs.append(value)
                continue
            if value.device.type != "openreg":
                self._never_capture(f"input {index} of the {self.kind} graph is on {value.device}; a graph "
                                    "reads openreg memory only (move it to openreg, or use Adam's "
                                    "capturable=True for step counts)")
                return None
            in_graph = _graph_memory_view(value)
            if in_graph is not None or index in self.static_input_idxs:
                static_inputs.append(value if in_graph is None else in_graph)
                continue
            buffer = torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=value.device)
            buffer.copy_(value)
            static_inputs.append(buffer)
            copied.append(index)
        captured = Graph()
        try:
            with graph(captured, pool=_pool(self.device_index)):
                static_outputs = self.model(list(static_inputs))
        except RuntimeError as error:
            self._never_capture(f"capturing the {self.kind} graph failed ({error}); it runs uncaptured")
            return None
        stats["captures"] += 1
        for output in static_outputs:
            if isinstance(output, torch.Tensor):
                _graph_outputs[output.untyped_storage().data_ptr()] = output
        return _Capture(captured, static_inputs, static_outputs, tuple(copied))


# Captured graphs' static outputs by the address of their memory: a later graph
# given one of them, or a view of one, as an input (the backward reading the
# forward's saved tensors) reads it in place rather than copying it, as
# cudagraph trees do with their pool's tensors. Weak: the captures own them.
_graph_outputs: "weakref.WeakValueDictionary[int, torch.Tensor]" = weakref.WeakValueDictionary()


def _graph_memory_view(tensor: torch.Tensor) -> Optional[torch.Tensor]:
    """The same view of a captured graph's static output, if `tensor` is one of its aliases.

    Not the alias itself: the capture would keep the tensor handed out to the
    user alive, and a static output must not depend on any one call's tensors.
    """
    static = _graph_outputs.get(tensor.untyped_storage().data_ptr())
    if static is None or static.dtype != tensor.dtype:
        return None
    return static.as_strided(tensor.size(), tensor.stride(), tensor.storage_offset())


def wrap(compiled_graph: Any, example_inputs: Sequence[Any], cudagraphs: Any) -> None:
    """Replaces the compiled graph's callable by a GraphReplayer (or records why it cannot)."""
    other_devices = sorted(set(compiled_graph.device_types) - {"openreg", "meta"})
    info = compiled_graph.cudagraph_info
    if other_devices == ["cpu"]:
        reason = ("CPU tensors in an openreg graph; a graph replays openreg work only (Adam and AdamW keep "
                  "their step counts on the CPU unless capturable=True)")
    elif other_devices:
        reason = f"an openreg graph also on {', '.join(other_devices)}; a graph replays one openreg device"
    elif info is not None and info.cudagraph_fail_reasons:
        reason = f"{', '.join(info.cudagraph_fail_reasons)} in an openreg graph"
    else:
        reason = None
    if reason is not None:
        BoxedBool.disable(cudagraphs)
        record_skip(reason)
        return
    kwargs = compiled_graph.fx_kwargs
    kind = "backward" if kwargs["is_backward"] else ("inference" if kwargs["is_inference"] else "forward")
    compiled_graph.current_callable = GraphReplayer(
        compiled_graph.current_callable, kwargs["static_input_idxs"] or (), next(iter(compiled_graph.device_idxs)),
        kind, compiled_graph.mutated_input_idxs)


def _route_openreg(original: Callable[..., None]) -> Callable[..., None]:
    def post_compile(example_inputs, compiled_graph, cudagraphs, constants, boxed_forward_device_index):
        if "openreg" in compiled_graph.device_types:
            return wrap(compiled_graph, example_inputs, cudagraphs)
        return original(example_inputs, compiled_graph, cudagraphs, constants, boxed_forward_device_index)

    post_compile.__wrapped__ = original
    return post_compile


def _allow_openreg(original: Callable[[Dict[torch.device, Any]], Optional[str]]):
    def check(device_node_mapping):
        # Graphs with openreg nodes are decided in `wrap`, which also runs
        # when a compiled graph is loaded from Inductor's cache (this check
        # does not), so that a skip's reason is recorded every time.
        if any(device.type == "openreg" for device in device_node_mapping):
            return None
        return original(device_node_mapping)

    check.__wrapped__ = original
    return check


def register() -> None:
    """Hooks openreg graphs into Inductor's cudagraph decisions (docs/compile.md lists the three hooks)."""
    if hasattr(cudagraph_utils.check_multiple_devices_or_any_cpu_nodes, "__wrapped__"):
        return
    cudagraph_utils.check_multiple_devices_or_any_cpu_nodes = _allow_openreg(
        cudagraph_utils.check_multiple_devices_or_any_cpu_nodes)
    output_code.cudagraph_post_compile = _route_openreg(output_code.cudagraph_post_compile)
    output_code.cudagraph_partition_post_compile = _route_openreg(output_code.cudagraph_partition_post_compile)
