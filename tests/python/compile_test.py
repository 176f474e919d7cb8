"""torch.compile on openreg: Inductor generates C++ kernels that run on openreg's streams.

Every test checks that Inductor really generated openreg kernels (a silent
fallback to eager must fail) and that results equal eager. Compiled
artifacts are shared through Inductor's cache outside the clone
(openreg_testing.use_shared_inductor_cache), so the second driver and later
runs load instead of compiling.
"""

import copy
import importlib.util
import os

import pytest
import torch
from torch import nn

from openreg_testing import run_python, use_shared_inductor_cache

use_shared_inductor_cache()

import torch._dynamo  # noqa: E402  (after the cache directory is chosen)
import torch._inductor.metrics as metrics  # noqa: E402
from torch._inductor.utils import run_and_get_code  # noqa: E402


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, f"examples/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    metrics.reset()
    yield
    torch._dynamo.reset()


def assert_generated_openreg_kernels(code: str) -> None:
    """The wrapper compiled C++ kernels for openreg and calls them (no eager fallback)."""
    assert metrics.generated_kernel_count > 0
    assert "openreg_kernels.compile(" in code, code


def test_fused_kernel_matches_eager_and_runs_on_openreg():
    def f(x, y):
        return (x.sin() + y * 2).relu().sum(dim=1)

    x, y = torch.randn(64, 32), torch.randn(64, 32)
    out, (code,) = run_and_get_code(torch.compile(f), x.openreg(), y.openreg())
    assert_generated_openreg_kernels(code)
    # Buffers come from openreg's allocation fast path, on the graph's device.
    assert "empty_strided_openreg(" in code and "= empty_strided(" not in code, code
    assert out.device.type == "openreg"
    torch.testing.assert_close(out.cpu(), f(x, y))


def test_same_computation_on_cpu_and_openreg_in_one_graph():
    # The two kernels' C++ is the same but one runs on the Python thread and
    # the other on a stream: they must stay two kernels.
    def f(a, b):
        return a.sin() + 1, b.sin() + 1

    a, b = torch.randn(32), torch.randn(32)
    out_cpu, out_openreg = torch.compile(f)(a, b.openreg())
    assert out_cpu.device.type == "cpu" and out_openreg.device.type == "openreg"
    torch.testing.assert_close(out_cpu, a.sin() + 1)
    torch.testing.assert_close(out_openreg.cpu(), b.sin() + 1)


def test_kernels_are_ordered_with_eager_work_on_a_side_stream():
    compiled = torch.compile(lambda x: (x * 3).exp().sum(dim=0))
    x = torch.randn(256, 64)
    side = torch.openreg.Stream()
    with torch.openreg.stream(side):
        # Eager work before and after the compiled kernel, all queued on
        # `side`; only the final copy to the host waits.
        staged = x.openreg() + 1
        out = compiled(staged) * 2
        done = torch.openreg.Event()
        done.record()
    done.synchronize()
    torch.testing.assert_close(out.cpu(), ((x + 1) * 3).exp().sum(dim=0) * 2)
    assert metrics.generated_kernel_count > 0


def test_example_training_matches_eager():
    train = load_example("train")
    features, labels = train.make_dataset(num_samples=256)

    def run(compiled: bool):
        model = train.build_model().openreg()
        optimizer = train.make_optimizer(model)
        step = train.train_step
        if compiled:
            model = torch.compile(model)
            optimizer.step = torch.compile(optimizer.step)
        losses = [step(model, optimizer, features[i::3].openreg(), labels[i::3].openreg()) for i in range(3)]
        return torch.stack(losses).cpu(), [p.detach().cpu() for p in model.parameters()]

    compiled_losses, compiled_parameters = run(compiled=True)
    assert metrics.generated_kernel_count > 0
    eager_losses, eager_parameters = run(compiled=False)
    torch.testing.assert_close(compiled_losses, eager_losses, rtol=1e-4, atol=1e-5)
    for compiled_parameter, eager_parameter in zip(compiled_parameters, eager_parameters):
        torch.testing.assert_close(compiled_parameter, eager_parameter, rtol=1e-4, atol=1e-5)


def test_transformer_block_forward_backward_matches_eager():
    blocks = load_example("transformer_block")
    batch = blocks.make_batch()
    eager_block, compiled_block = blocks.build_block().openreg(), blocks.build_block().openreg()
    eager_loss = blocks.forward_backward(eager_block, batch.openreg())
    compiled_loss = blocks.forward_backward(torch.compile(compiled_block), batch.openreg())
    assert metrics.generated_kernel_count > 0
    torch.testing.assert_close(compiled_loss.cpu(), eager_loss.cpu(), rtol=1e-4, atol=1e-5)
    for compiled_parameter, eager_parameter in zip(compiled_block.parameters(), eager_block.parameters()):
        torch.testing.assert_close(compiled_parameter.grad.cpu(), eager_parameter.grad.cpu(), rtol=1e-3, atol=1e-5)


def test_graph_break_recompile_and_dynamic_shapes():
    def f(x):
        y = x.cos() * 2
        torch._dynamo.graph_break()
        return (y + 1).tanh()

    compiled = torch.compile(f)
    for rows in (8, 8, 16):
        x = torch.randn(rows, 4)
        torch.testing.assert_close(compiled(x.openreg()).cpu(), f(x))
    assert metrics.generated_kernel_count > 0

    counters = torch._dynamo.utils.counters
    counters.clear()
    dynamic = torch.compile(lambda x: x.sigmoid() * x.sum(), dynamic=True)
    for rows in (5, 9, 13):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(dynamic(x.openreg()).cpu(), x.sigmoid() * x.sum())
    # One graph serves every size.
    assert counters["stats"]["unique_graphs"] == 1


def test_max_autotune_extern_mm_and_fallback_op():
    def f(a, b):
        # mm is an extern kernel, cdist one Inductor does not lower: both
        # run as openreg's eager ops between generated kernels.
        product = torch.relu(a @ b)
        return torch.cdist(product, product).sum(dim=1) + 1

    a, b = torch.randn(16, 8), torch.randn(8, 16)
    compiled = torch.compile(f, mode="max-autotune-no-cudagraphs")
    out, (code,) = run_and_get_code(compiled, a.openreg(), b.openreg())
    assert_generated_openreg_kernels(code)
    torch.testing.assert_close(out.cpu(), f(a, b), rtol=1e-4, atol=1e-4)


def test_bad_kernels_and_launch_arguments_raise_and_leave_the_process_working():
    from torch_openreg import _C

    # Checked once, when the kernel is loaded.
    with pytest.raises(ValueError, match="expected only 'P', 'M', 'I' or 'F'"):
        _C._CompiledKernel(1, "k", "X")
    with pytest.raises(ValueError, match="has no tensor parameter"):
        _C._CompiledKernel(1, "k", "IF")
    with pytest.raises(ValueError, match="entry point is null"):
        _C._CompiledKernel(0, "k", "P")
    # Checked at every launch (the entry point is never called: every launch fails).
    tensor = torch.ones(4).openreg()
    with pytest.raises(ValueError, match="takes 2 arguments"):
        _C._CompiledKernel(1, "k", "PI")(tensor)
    with pytest.raises(ValueError, match="argument 1 must be an int, got a tensor"):
        _C._CompiledKernel(1, "k", "PI")(tensor, tensor)
    with pytest.raises(ValueError, match="argument 0 must be a tensor, got an int"):
        _C._CompiledKernel(1, "k", "P")(3)
    with pytest.raises(ValueError, match="openreg tensor or a CPU scalar"):
        _C._CompiledKernel(1, "k", "P")(torch.ones(4))
    with pytest.raises(ValueError, match="written by the kernel and must be an openreg tensor"):
        _C._CompiledKernel(1, "k", "M")(torch.ones(()))
    with pytest.raises(ValueError, match="all tensors must be on one device; argument 1 is on openreg:1"):
        _C._CompiledKernel(1, "k", "PM")(tensor, torch.ones(4, device="openreg:1"))
    with pytest.raises(ValueError, match="got no openreg tensor"):
        _C._CompiledKernel(1, "k", "P")(torch.ones(()))
    with pytest.raises(TypeError, match="argument 0 must be a tensor, an int or a float, got <class 'str'>"):
        _C._CompiledKernel(1, "k", "P")("text")
    # The wrapper's allocation fast path.
    with pytest.raises(TypeError, match="dtype must be a torch.dtype, got <class 'str'>"):
        _C._empty_strided((2,), (1,), "float32", 0)
    with pytest.raises((IndexError, RuntimeError, ValueError), match="device index 7 is out of range"):
        _C._empty_strided((2,), (1,), torch.float32, 7)
    buffer = _C._empty_strided((2, 3), (1, 2), torch.float64, 1)
    assert (buffer.device, buffer.stride(), buffer.dtype) == (torch.device("openreg:1"), (1, 2), torch.float64)
    assert (tensor + 1).sum().item() == 8


def test_cpp_wrapper_is_refused_by_inductor_with_a_reason():
    # In a child: a failed compile leaves Inductor state behind.
    result = run_python(
        """
        import torch
        import torch._inductor.config as config
        config.cpp_wrapper = True
        try:
            torch.compile(lambda x: x + 1)(torch.ones(2).openreg())
        except Exception as error:
            print(type(error).__name__, error)
        """,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Device openreg not supported" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(os.environ.get("OPENREG_DRIVER") != "threaded_sim", reason="threaded_sim's adversarial mode")
def test_training_matches_eager_under_adversarial_delays():
    # Random delays before every queued item: a compiled kernel that ran
    # before the eager work it reads, or after the memory it touches was
    # reused, would change the losses.
    result = run_python(
        """
        import importlib.util, torch
        spec = importlib.util.spec_from_file_location("train", "examples/train.py")
        train = importlib.util.module_from_spec(spec); spec.loader.exec_module(train)
        features, labels = train.make_dataset(num_samples=256)

        def run(compiled):
            model = train.build_model().openreg()
            optimizer = train.make_optimizer(model)
            if compiled:
                model = torch.compile(model)
                optimizer.step = torch.compile(optimizer.step)
            return torch.stack([train.train_step(model, optimizer, features[i::3].openreg(), labels[i::3].openreg())
                                for i in range(3)]).cpu()

        torch.testing.assert_close(run(True), run(False), rtol=1e-4, atol=1e-5)
        print("same")
        """,
        env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=11"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "same" in result.stdout


@pytest.mark.skipif(os.environ.get("OPENREG_DRIVER") != "threaded_sim", reason="threaded_sim's adversarial mode")
def test_compiled_kernels_let_go_of_memory_ordered_on_their_stream_and_keep_every_value():
    # Random delays keep the stream far behind the host. A compiled kernel
    # owns no reference to memory ordered on its own stream (Note [Launching
    # compiled kernels]), so results Python drops are reused by the next call
    # at once; when every kernel held its output until it ran, 200 dropped
    # results of 128 KiB were alive at once. Inputs dropped while their kernel
    # is queued serve the next inputs: a kernel running after that reuse would
    # read the wrong values.
    result = run_python(
        """
        import torch
        from torch._inductor.utils import run_and_get_code

        compiled = torch.compile(lambda x: (x * 3 + 1).relu())
        n = 1 << 15
        x = torch.full((n,), 1.0, device="openreg")
        _, code = run_and_get_code(compiled, x)
        assert "openreg_kernels.compile(" in "".join(code)
        torch.openreg.synchronize()
        torch.openreg.reset_peak_memory_stats()
        base = torch.openreg.memory_allocated()
        for _ in range(200):
            compiled(x)
        torch.openreg.synchronize()
        print("peak", torch.openreg.max_memory_allocated() - base)
        kept = []
        for trial in range(40):
            x = torch.full((n,), float(trial), device="openreg")
            kept.append(compiled(x))
            del x
        print("wrong", sum(int((y != 3 * trial + 1).sum().item()) for trial, y in enumerate(kept)))
        """,
        env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=11"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split() for line in result.stdout.splitlines())
    assert int(lines["peak"]) <= 128 * 1024, result.stdout
    assert lines["wrong"] == "0", result.stdout


def test_import_torch_does_not_import_dynamo_and_registration_follows_it():
    result = run_python(
        """
        import sys, torch
        assert "torch._dynamo" not in sys.modules and "torch._inductor.compile_fx" not in sys.modules
        from torch._dynamo.device_interface import get_interface_for_device
        print(get_interface_for_device("openreg").__name__)
        import torch._inductor.compile_fx
        from torch._inductor.codegen.common import get_scheduling_for_device, get_device_op_overrides
        print(get_scheduling_for_device("openreg").__name__, type(get_device_op_overrides("openreg")).__name__)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OpenRegInterface", "OpenRegScheduling", "OpenRegDeviceOpOverrides"]


def test_second_device():
    def f(x, w):
        return (x @ w).relu().sum(dim=0) + 1

    x, w = torch.randn(16, 8), torch.randn(8, 4)
    out = torch.compile(f)(x.to("openreg:1"), w.to("openreg:1"))
    assert out.device == torch.device("openreg:1")
    assert metrics.generated_kernel_count > 0
    torch.testing.assert_close(out.cpu(), f(x, w), rtol=1e-5, atol=1e-5)


def test_compiled_kernels_are_captured_into_a_graph_and_replayed():
    # Generated kernels launch through the same capture-aware path as eager
    # ops, so a capture records them and every replay runs them again.
    def f(x, y):
        return (x * y + 1).relu().sum(0) * 2

    compiled = torch.compile(f)
    x, y = torch.randn(64, 32, device="openreg"), torch.randn(64, 32, device="openreg")
    _, (code,) = run_and_get_code(compiled, x, y)
    assert_generated_openreg_kernels(code)
    compiled(x, y)  # warm-up outside the capture, as on CUDA
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        out = compiled(x, y)
    for seed in range(3):
        new_x = torch.randn(64, 32, generator=torch.Generator().manual_seed(seed))
        x.copy_(new_x)
        graph.replay()
        torch.testing.assert_close(out.cpu(), f(new_x, y.cpu()))


# mode="reduce-overhead": compiled graphs replay openreg graphs (graph_replay.py).


def replay_stats():
    from torch_openreg._inductor import graph_replay

    return dict(graph_replay.stats)


def stats_since(before):
    now = replay_stats()
    changes = {key: now.get(key, 0) - before.get(key, 0) for key in set(now) | set(before)}
    return {key: change for key, change in changes.items() if change}


def test_reduce_overhead_training_replays_graphs_and_matches_eager():
    # Adam with capturable=True keeps its step counts on the device, so the
    # optimizer step is captured too: every later step is three replays
    # (forward, backward, optimizer) and nothing runs uncaptured.
    train = load_example("train")
    features, labels = train.make_dataset(num_samples=256)
    batches = [(features[i * 64:(i + 1) * 64], labels[i * 64:(i + 1) * 64]) for i in range(4)]

    def run(compiled: bool, steps: int):
        model = train.build_model().openreg()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
        if compiled:
            model = torch.compile(model, mode="reduce-overhead")
            optimizer.step = torch.compile(optimizer.step, mode="reduce-overhead")
        losses = []
        for step in range(steps):
            x, y = batches[step % len(batches)]
            losses.append(train.train_step(model, optimizer, x.openreg(), y.openreg()))
            if step == 1:
                before = replay_stats()
        return torch.stack(losses).cpu(), [p.detach().cpu() for p in model.parameters()], stats_since(before)

    compiled_losses, compiled_parameters, counts = run(compiled=True, steps=6)
    assert metrics.generated_kernel_count > 0
    # Steps 0 and 1 warmed up and captured; steps 2-5 only replayed.
    assert counts.get("replays") == 3 * 4 and counts.get("uncaptured_runs", 0) == 0, counts
    eager_losses, eager_parameters, _ = run(compiled=False, steps=6)
    torch.testing.assert_close(compiled_losses, eager_losses, rtol=1e-4, atol=1e-5)
    for compiled_parameter, eager_parameter in zip(compiled_parameters, eager_parameters):
        torch.testing.assert_close(compiled_parameter, eager_parameter, rtol=1e-4, atol=1e-5)


def test_reduce_overhead_recaptures_per_shape_and_skips_cpu_inputs_with_a_reason():
    def f(x):
        return (x.sin() * 2 + 1).relu().sum(dim=1)

    compiled = torch.compile(f, mode="reduce-overhead", dynamic=True)
    before = replay_stats()
    for rows in (6, 6, 6, 10, 10, 10):
        x = torch.randn(rows, 4)
        torch.testing.assert_close(compiled(x.openreg()).cpu(), f(x))
    # One dynamic graph; per shape a warm-up, a capture, a replay.
    assert stats_since(before) == {"uncaptured_runs": 2, "captures": 2, "replays": 4}

    # A CPU tensor in the graph: Inductor's skip counter and openreg's reason.
    counters = torch._dynamo.utils.counters
    skips = counters["inductor"]["cudagraph_skips"]
    before = replay_stats()

    def g(x, scale):
        return x * scale.openreg() + scale.openreg()

    scale = torch.tensor(3.0)
    x = torch.randn(8)
    compiled_g = torch.compile(g, mode="reduce-overhead")
    for _ in range(3):
        torch.testing.assert_close(compiled_g(x.openreg(), scale).cpu(), x * scale + scale)
    assert counters["inductor"]["cudagraph_skips"] > skips
    assert stats_since(before).get("replays", 0) == 0
    from torch_openreg._inductor import graph_replay

    assert any("CPU tensors in an openreg graph" in reason for reason in graph_replay.skip_reasons)


def boxed(function):
    """A callable with a compiled graph's boxed convention: one list of inputs, cleared by the call."""
    def call(inputs):
        arguments = list(inputs)
        inputs.clear()
        return function(*arguments)

    return call


def test_replayer_copies_inputs_keeps_static_ones_and_hands_out_fresh_aliases():
    from torch_openreg._inductor.graph_replay import GraphReplayer

    weight = torch.ones(4, device="openreg")
    replayer = GraphReplayer(boxed(lambda w, x: [x * w + 1]), static_input_idxs=[0], device_index=0,
                             kind="forward", mutated_input_idxs=())
    before = replay_stats()
    outputs = []
    for value in range(4):
        (out,) = replayer([weight, torch.full((4,), float(value), device="openreg")])
        outputs.append(out.cpu())
        del out
    assert [o.tolist() for o in outputs] == [[v + 1.0] * 4 for v in range(4)]
    assert stats_since(before) == {"uncaptured_runs": 1, "captures": 1, "replays": 3}
    # The static input is read in place: changing it changes the next replay.
    weight.fill_(2.0)
    (out,) = replayer([weight, torch.full((4,), 5.0, device="openreg")])
    assert out.cpu().tolist() == [11.0] * 4


def test_replayer_never_overwrites_an_output_still_referenced_unless_a_step_was_marked():
    from torch_openreg._inductor import graph_replay
    from torch_openreg._inductor.graph_replay import GraphReplayer

    replayer = GraphReplayer(boxed(lambda x: [x + 1]), static_input_idxs=(), device_index=0, kind="inference",
                             mutated_input_idxs=())
    replayer([torch.zeros(3, device="openreg")])  # warm-up
    (kept,) = replayer([torch.zeros(3, device="openreg")])  # capture and replay
    before = replay_stats()
    (second,) = replayer([torch.ones(3, device="openreg")])
    # `kept` is still referenced: the call ran uncaptured and said why.
    assert kept.cpu().tolist() == [1.0] * 3 and second.cpu().tolist() == [2.0] * 3
    assert stats_since(before) == {"uncaptured_runs": 1, "kept_outputs": 1}
    assert "still referenced" in graph_replay.skip_reasons[-1]
    # After torch.compiler.cudagraph_mark_step_begin() the caller is done with
    # earlier outputs, as with cudagraph trees: the replay overwrites them.
    torch.compiler.cudagraph_mark_step_begin()
    before = replay_stats()
    (third,) = replayer([torch.full((3,), 4.0, device="openreg")])
    assert third.cpu().tolist() == [5.0] * 3 and kept.cpu().tolist() == [5.0] * 3
    assert stats_since(before) == {"replays": 1}


def test_replayer_sees_outputs_kept_through_other_tensors_of_their_memory():
    # `.detach()` of an output (what autograd stores as `.grad` from a backward
    # output, or a loss kept for logging) is another tensor on the same memory.
    from torch_openreg._inductor.graph_replay import GraphReplayer

    replayer = GraphReplayer(boxed(lambda x: [x + 1]), static_input_idxs=(), device_index=0, kind="inference",
                             mutated_input_idxs=())
    replayer([torch.zeros(3, device="openreg")])  # warm-up
    kept = [replayer([torch.zeros(3, device="openreg")])[0].detach()]  # capture and replay
    before = replay_stats()
    kept.append(replayer([torch.ones(3, device="openreg")])[0].detach())
    assert [k.cpu().tolist() for k in kept] == [[1.0] * 3, [2.0] * 3]
    assert stats_since(before) == {"uncaptured_runs": 1, "kept_outputs": 1}


def test_reduce_overhead_gradients_accumulated_over_micro_batches_match_eager():
    # zero_grad() sets gradients to None; the first micro-batch's backward
    # output becomes `.grad` (autograd keeps it rather than copying), and the
    # second backward replay must not overwrite it.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    batches = [torch.randn(4, 8) for _ in range(2)]

    def gradients(module, device):
        module.zero_grad()
        for batch in batches:
            module(batch.to(device)).square().sum().backward()
        return [p.grad.cpu().clone() for p in module.parameters()]

    compiled = torch.compile(copy.deepcopy(model).openreg(), mode="reduce-overhead")
    expected = gradients(model, "cpu")
    for _ in range(3):  # warm-up, capture, replays
        for got, want in zip(gradients(compiled, "openreg"), expected):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_replayer_runs_uncaptured_with_a_reason_when_capture_fails_or_shapes_exceed_the_bound():
    from torch_openreg._inductor import graph_replay
    from torch_openreg._inductor.graph_replay import GraphReplayer

    def reads_the_host(x):
        # .item() waits for device work, which a capture forbids.
        return [x * x.sum().item()]

    replayer = GraphReplayer(boxed(reads_the_host), (), 0, "forward", ())
    for value in (1.0, 2.0, 3.0):
        (out,) = replayer([torch.full((2,), value, device="openreg")])
        assert out.cpu().tolist() == [value * 2 * value] * 2
    assert "capturing the forward graph failed" in replayer.uncaptured_reason
    assert "not allowed while" in graph_replay.skip_reasons[-1]
    assert replayer.captures == {}

    # A CPU tensor input cannot be static graph memory.
    cpu_input = GraphReplayer(boxed(lambda x, s: [x * s]), (), 0, "forward", ())
    for _ in range(2):
        (out,) = cpu_input([torch.ones(2, device="openreg"), torch.tensor(2.0)])
        assert out.cpu().tolist() == [2.0, 2.0]
    assert "input 1 of the forward graph is on cpu" in cpu_input.uncaptured_reason

    # Beyond the bound on shapes, new shapes run uncaptured.
    import torch._inductor.config as inductor_config

    with inductor_config.patch({"triton.cudagraph_dynamic_shape_warn_limit": 2}):
        shapes = GraphReplayer(boxed(lambda x: [x * 3]), (), 0, "forward", ())
        for size in (1, 1, 2, 2, 3, 3):
            (out,) = shapes([torch.ones(size, device="openreg")])
            assert out.cpu().tolist() == [3.0] * size
        assert len(shapes.captures) == 2
        assert "more than 2 input shapes" in graph_replay.skip_reasons[-1]


@pytest.mark.skipif(os.environ.get("OPENREG_DRIVER") != "threaded_sim", reason="threaded_sim's adversarial mode")
def test_reduce_overhead_training_matches_eager_under_adversarial_delays():
    # Random delays before every queued item: a replay that ran before the
    # copy of its batch into the static input, or a copy that overwrote a
    # static input the previous replay still read, would change the losses.
    result = run_python(
        """
        import importlib.util, torch
        from torch_openreg._inductor import graph_replay
        spec = importlib.util.spec_from_file_location("train", "examples/train.py")
        train = importlib.util.module_from_spec(spec); spec.loader.exec_module(train)
        features, labels = train.make_dataset(num_samples=256)

        def run(compiled):
            model = train.build_model().openreg()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
            if compiled:
                model = torch.compile(model, mode="reduce-overhead")
                optimizer.step = torch.compile(optimizer.step, mode="reduce-overhead")
            return torch.stack([train.train_step(model, optimizer, features[i % 4 * 64:][:64].openreg(),
                                                 labels[i % 4 * 64:][:64].openreg()) for i in range(6)]).cpu()

        torch.testing.assert_close(run(True), run(False), rtol=1e-4, atol=1e-5)
        print("same, replays:", graph_replay.stats["replays"])
        """,
        env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=11"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # Step 1 captures and replays the forward and backward (the optimizer's
    # gradients then live at new addresses, so it warms up again); steps 2-5
    # are three replays each.
    assert "same, replays: 14" in result.stdout, result.stdout
