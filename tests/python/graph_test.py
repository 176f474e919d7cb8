"""Graph capture and replay on openreg (torch.openreg.Graph, torch.accelerator.Graph), as CUDA graphs."""

import gc
import os

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]


def capture(function, graph=None, **graph_kwargs):
    """Warms `function` up on a side stream, then captures it; returns (graph, static result)."""
    side = torch.openreg.Stream()
    side.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(side):
        function()
    torch.openreg.current_stream().wait_stream(side)
    graph = graph if graph is not None else torch.openreg.Graph()
    with torch.openreg.graph(graph, **graph_kwargs):
        result = function()
    return graph, result


def test_replay_runs_the_captured_work_again_with_new_static_inputs():
    static_x = torch.ones(16, device="openreg")
    static_y = torch.full((16,), 2.0, device="openreg")
    graph, out = capture(lambda: (static_x * static_y + 1).relu().sum(0, keepdim=True) * static_x)
    for value in (3.0, -1.0, 0.5):
        static_x.copy_(torch.full((16,), value))
        graph.replay()
        expected = (torch.full((16,), value) * 2 + 1).relu().sum(0, keepdim=True) * torch.full((16,), value)
        torch.testing.assert_close(out.cpu(), expected)


def test_replays_of_kernels_that_move_their_output_write_the_captured_result():
    # huber_loss with a reduction uses its out= argument as scratch space of
    # the input's shape, and max_unpool2d restrides it: on the CPU alias the
    # first run moves the output elsewhere, and every replay must still write
    # the result where the graph's caller holds it.
    x = torch.randn(4, 6, device="openreg")
    y = torch.randn(4, 6, device="openreg")
    pooled, indices = torch.nn.functional.max_pool2d(torch.randn(1, 2, 4, 4), 2, return_indices=True)
    static_pooled = pooled.to("openreg").contiguous(memory_format=torch.channels_last)
    static_indices = indices.to("openreg")
    graph, (loss, unpooled) = capture(lambda: (
        torch.nn.functional.huber_loss(x, y),
        torch.nn.functional.max_unpool2d(static_pooled, static_indices, 2)))
    for seed in range(3):
        generator = torch.Generator().manual_seed(seed)
        new_x, new_pooled = torch.randn(4, 6, generator=generator), torch.randn(1, 2, 2, 2, generator=generator)
        x.copy_(new_x)
        static_pooled.copy_(new_pooled)
        graph.replay()
        torch.testing.assert_close(loss.cpu(), torch.nn.functional.huber_loss(new_x, y.cpu()))
        torch.testing.assert_close(unpooled.cpu(), torch.nn.functional.max_unpool2d(
            new_pooled.contiguous(memory_format=torch.channels_last), indices, 2))



def test_replays_of_kernels_that_flip_the_conjugate_bit_of_their_output_write_the_values():
    # linalg_lu_solve with left=False conjugates its result by flipping the
    # CPU alias's conjugate bit: every replay must start from the planned bit.
    torch.manual_seed(0)
    lu, pivots = torch.linalg.lu_factor(torch.randn(3, 3, dtype=torch.complex64))
    static_lu, static_pivots = lu.to("openreg"), pivots.to("openreg")
    static_b = torch.randn(2, 3, dtype=torch.complex64, device="openreg")
    graph, solution = capture(lambda: torch.linalg.lu_solve(static_lu, static_pivots, static_b, left=False))
    for seed in range(3):
        new_b = torch.randn(2, 3, dtype=torch.complex64, generator=torch.Generator().manual_seed(seed))
        static_b.copy_(new_b)
        graph.replay()
        torch.testing.assert_close(solution.cpu(), torch.linalg.lu_solve(lu, pivots, new_b, left=False))

def test_capture_records_instead_of_running():
    x = torch.zeros(4, device="openreg")
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        x.add_(1)
        assert torch.openreg.is_current_stream_capturing()
    assert not torch.openreg.is_current_stream_capturing()
    assert x.cpu().tolist() == [0.0] * 4
    graph.replay()
    graph.replay()
    assert x.cpu().tolist() == [2.0] * 4


def test_generic_accelerator_graph_works_on_openreg():
    x = torch.zeros(8, device="openreg")
    stream = torch.Stream(device="openreg")
    graph = torch.accelerator.Graph()
    with stream, graph:
        x += 1
    graph.replay()
    graph.replay()
    graph.replay()
    assert x.cpu().tolist() == [3.0] * 8


def test_keep_graph_instantiates_on_demand_and_reset_allows_recapture():
    x = torch.zeros(2, device="openreg")
    graph = torch.openreg.Graph(keep_graph=True)
    with torch.openreg.graph(graph):
        x.add_(1)
    graph.instantiate()
    graph.replay()
    assert x.cpu().tolist() == [1.0, 1.0]
    graph.reset()
    with pytest.raises(RuntimeError, match="holds no capture"):
        graph.replay()
    with torch.openreg.graph(graph):
        x.mul_(10)
    graph.replay()  # keep_graph: instantiated by the first replay
    assert x.cpu().tolist() == [10.0, 10.0]


def test_capturing_twice_without_reset_is_an_error():
    x = torch.zeros(2, device="openreg")
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        x.add_(1)
    with pytest.raises(RuntimeError, match="call reset"):
        graph.capture_begin()
    with pytest.raises(RuntimeError, match="no capture is underway"):
        torch.openreg.Graph().capture_end()


def test_debug_dump_lists_the_captured_work(tmp_path):
    x = torch.ones(4, device="openreg")
    graph = torch.openreg.Graph()
    with pytest.raises(RuntimeError, match="enable_debug_mode"):
        graph.debug_dump(str(tmp_path / "early.txt"))
    graph.enable_debug_mode()
    with torch.openreg.graph(graph):
        y = x.mul(3).add(1)
    path = tmp_path / "graph.txt"
    graph.debug_dump(str(path))
    dump = path.read_text()
    assert "1 launch(es) per replay" in dump
    assert "work aten::mul" in dump and "work aten::add" in dump, dump
    graph.replay()
    assert y.cpu().tolist() == [4.0] * 4


def test_single_stream_replay_is_one_launch(tmp_path):
    x = torch.zeros(4, device="openreg")
    graph = torch.openreg.Graph()
    graph.enable_debug_mode()
    with torch.openreg.graph(graph):
        for _ in range(100):
            x.add_(1)
    graph.debug_dump(str(tmp_path / "g.txt"))
    dump = (tmp_path / "g.txt").read_text()
    assert dump.count("launch on stream") == 1, dump
    graph.replay()
    assert x.cpu().tolist() == [100.0] * 4


def test_graph_keeps_the_memory_it_touches_alive():
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        a = torch.ones(1024, device="openreg")
        b = a * 2
        out = b + a
    del a, b
    gc.collect()
    # Fresh allocations must not land on memory the graph still uses.
    junk = [torch.full((1024,), 99.0, device="openreg") for _ in range(8)]
    graph.replay()
    assert out.cpu().tolist() == [3.0] * 1024
    del junk


def test_private_pool_stays_reserved_while_the_graph_lives_and_can_be_shared():
    torch.openreg.synchronize()
    torch.openreg.empty_cache()
    free_before = torch.openreg.mem_get_info()[0]
    g1 = torch.openreg.Graph()
    with torch.openreg.graph(g1):
        out1 = torch.ones(1 << 20, device="openreg") * 2
    g2 = torch.openreg.Graph()
    with torch.openreg.graph(g2, pool=g1.pool()):
        out2 = out1 + 1
    assert g2.pool() == g1.pool()
    g1.replay()
    g2.replay()
    assert out2[:3].cpu().tolist() == [3.0] * 3
    torch.openreg.empty_cache()
    assert torch.openreg.mem_get_info()[0] <= free_before - (8 << 20)  # both outputs, 4 MiB each
    del g1
    gc.collect()
    torch.openreg.empty_cache()
    assert torch.openreg.mem_get_info()[0] <= free_before - (8 << 20)  # g2 still holds the pool
    del g2, out1, out2
    gc.collect()
    torch.openreg.synchronize()
    torch.openreg.empty_cache()
    assert torch.openreg.mem_get_info()[0] == free_before


def test_user_pool_handle_is_shared():
    pool = torch.openreg.graph_pool_handle()
    graphs = []
    outs = []
    for value in (1.0, 2.0):
        graph = torch.openreg.Graph()
        with torch.openreg.graph(graph, pool=pool):
            outs.append(torch.full((4,), value, device="openreg") + 1)
        assert graph.pool() == pool
        graphs.append(graph)
    for graph in graphs:
        graph.replay()
    assert [o.cpu().tolist() for o in outs] == [[2.0] * 4, [3.0] * 4]


FORBIDDEN = {
    "item": lambda x: x.sum().item(),
    "pageable_copy": lambda x: x.cpu(),
    "pageable_copy_in": lambda x: x.copy_(torch.ones(4)),
    "stream_synchronize": lambda x: torch.openreg.current_stream().synchronize(),
    "device_synchronize": lambda x: torch.openreg.synchronize(),
    "stream_query": lambda x: torch.openreg.current_stream().query(),
    "event_query": lambda x: torch.openreg.current_stream().record_event().query(),
    "event_synchronize": lambda x: torch.openreg.current_stream().record_event().synchronize(),
    "data_dependent_shape": lambda x: x.nonzero(),
}


@pytest.mark.parametrize("name", sorted(FORBIDDEN))
def test_forbidden_calls_abandon_the_capture_and_the_device_stays_usable(name):
    x = torch.ones(4, device="openreg")
    graph = torch.openreg.Graph()
    with pytest.raises(RuntimeError, match="not allowed while openreg:0 is capturing a graph"):
        with torch.openreg.graph(graph):
            x.add_(1)
            FORBIDDEN[name](x)
    assert not torch.openreg.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="capture was abandoned"):
        graph.replay()
    # The device works eagerly again, and the graph can capture anew.
    assert x.cpu().tolist() == [1.0] * 4
    assert (x * 2).sum().item() == 8.0
    graph.reset()
    with torch.openreg.graph(graph):
        x.add_(1)
    graph.replay()
    assert x.cpu().tolist() == [2.0] * 4


@pytest.mark.parametrize("copy", ["copy_ into the other device", ".to() the other device"])
def test_cross_device_copies_abandon_the_capture_and_both_devices_stay_usable(copy):
    assert torch.openreg.device_count() >= 2, "the drivers' default configuration has two devices"
    x = torch.ones(4, device="openreg:0")
    y = torch.zeros(4, device="openreg:1")
    graph = torch.openreg.Graph()
    with pytest.raises(RuntimeError, match=r"a stream of openreg:1 waited for work captured on openreg:0 .*"
                                           r"records the work of one device only"):
        with torch.openreg.graph(graph):
            x.add_(1)
            if copy.startswith("copy_"):
                y.copy_(x)
            else:
                x.to("openreg:1")
    assert not torch.openreg.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="capture was abandoned"):
        graph.replay()
    # Recorded work did not run; both devices run work eagerly again.
    assert x.cpu().tolist() == [1.0] * 4
    y.copy_(x + 1)
    assert y.cpu().tolist() == [2.0] * 4
    assert (y.to("openreg:0") * 2).sum().item() == 16.0


def test_pinned_copies_are_captured():
    host_in = torch.zeros(4).pin_memory()
    host_out = torch.zeros(4).pin_memory()
    device = torch.zeros(4, device="openreg")
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        device.copy_(host_in, non_blocking=True)
        host_out.copy_(device * 2, non_blocking=True)
    for value in (1.0, 5.0):
        host_in.fill_(value)
        graph.replay()
        torch.openreg.synchronize()
        assert host_out.tolist() == [2 * value] * 4


RANDOM_PROGRAM = """
import torch
torch.manual_seed(123)
static = torch.zeros(6, device="openreg")
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    static.copy_(torch.rand(6, device="openreg") + torch.nn.functional.dropout(torch.randn(6, device="openreg"), 0.5))
for _ in range(3):
    graph.replay()
    print(" ".join(f"{v:.6f}" for v in static.cpu().tolist()))
"""


def test_random_ops_give_fresh_numbers_per_replay_and_the_same_on_every_driver():
    outputs = {}
    for driver in ("cpu_sim", "threaded_sim"):
        result = run_python(RANDOM_PROGRAM, env={"OPENREG_DRIVER": driver})
        assert result.returncode == 0, result.stderr
        outputs[driver] = result.stdout.split("\n")[:3]
    lines = outputs["cpu_sim"]
    assert len(set(lines)) == 3, lines
    assert outputs["threaded_sim"] == lines


def test_manual_seed_before_replays_repeats_their_numbers():
    static = torch.zeros(8, device="openreg")
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        static.copy_(torch.rand(8, device="openreg"))
    torch.openreg.manual_seed(5)
    graph.replay()
    first = static.cpu()
    torch.openreg.manual_seed(5)
    graph.replay()
    torch.testing.assert_close(static.cpu(), first)


def test_multi_stream_capture_joins_streams_through_events(tmp_path):
    x = torch.ones(256, device="openreg")
    side = torch.openreg.Stream()
    graph = torch.openreg.Graph()
    graph.enable_debug_mode()
    with torch.openreg.graph(graph):
        capturing = torch.openreg.current_stream()
        side.wait_stream(capturing)
        a = x * 2
        with torch.openreg.stream(side):
            b = x * 3
            assert torch.openreg.is_current_stream_capturing()
        capturing.wait_stream(side)
        out = a + b
    graph.debug_dump(str(tmp_path / "g.txt"))
    assert "2 stream(s)" in (tmp_path / "g.txt").read_text()
    for value in (1.0, 4.0):
        x.fill_(value)
        graph.replay()
        assert out.cpu().tolist() == [5 * value] * 256


def test_a_stream_that_never_rejoins_fails_capture_end():
    x = torch.ones(4, device="openreg")
    side = torch.openreg.Stream()
    graph = torch.openreg.Graph()
    with pytest.raises(RuntimeError, match="did not wait for that stream"):
        with torch.openreg.graph(graph):
            side.wait_stream(torch.openreg.current_stream())
            with torch.openreg.stream(side):
                x.add_(1)
    assert not torch.openreg.is_current_stream_capturing()
    assert (x + 0).cpu().tolist() == [1.0] * 4


def make_model_and_data(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, capturable=True)
    features = torch.randn(64, 32)
    labels = torch.randint(0, 8, (64,))
    return model, optimizer, features, labels


def step(model, optimizer, features, labels):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


def test_captured_training_step_equals_eager_training():
    eager_model, eager_opt, features, labels = make_model_and_data("openreg")
    f, l = features.to("openreg"), labels.to("openreg")
    eager_losses = [step(eager_model, eager_opt, f, l).cpu() for _ in range(5)]

    model, opt, _, _ = make_model_and_data("openreg")
    static_f, static_l = f.clone(), l.clone()
    graph = torch.openreg.Graph()
    # The first step runs eagerly (it creates the optimizer's state), the
    # rest are replays of the second, captured.
    losses = [step(model, opt, static_f, static_l).cpu()]
    side = torch.openreg.Stream()
    side.wait_stream(torch.openreg.current_stream())
    with torch.openreg.graph(graph, stream=side):
        static_loss = step(model, opt, static_f, static_l)
    for _ in range(4):
        graph.replay()
        losses.append(static_loss.cpu())
    torch.testing.assert_close(torch.stack(losses), torch.stack(eager_losses))
    for p, q in zip(model.parameters(), eager_model.parameters()):
        torch.testing.assert_close(p.cpu(), q.cpu())


@pytest.mark.skipif(DRIVER != "threaded_sim", reason="adversarial mode is threaded_sim's")
def test_replays_under_adversarial_scheduling():
    program = """
import torch
x = torch.ones(1 << 14, device="openreg")
side = torch.openreg.Stream()
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    cap = torch.openreg.current_stream()
    side.wait_stream(cap)
    a = x * 2
    with torch.openreg.stream(side):
        b = (x * 3).sqrt()
    cap.wait_stream(side)
    out = a + b * b
for value in range(1, 6):
    x.fill_(float(value))
    graph.replay()
    print(out.sum().item())
"""
    result = run_python(program, env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=11,adversarial_max_delay_us=3000"})
    assert result.returncode == 0, result.stderr
    assert [float(v) for v in result.stdout.split()] == [5.0 * v * (1 << 14) for v in range(1, 6)]


MINIMAL_DRIVER_PROGRAM = """
import torch
x = torch.ones(8, device="openreg")
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    y = (x * 2 + torch.rand(8, device="openreg")).relu()
    x.add_(1)
graph.replay()
first = y.cpu()
graph.replay()
print(x.cpu().tolist() == [3.0] * 8, bool((first != y.cpu()).any()), torch.openreg.driver_info().name)
"""


def test_capture_and_replay_work_on_the_minimal_driver():
    # Recording lives in the core: a driver with only the ABI's required
    # functions gets graphs too.
    driver = os.path.abspath("examples/minimal_driver/libopenreg_minimal.so")
    result = run_python(MINIMAL_DRIVER_PROGRAM, env={"OPENREG_DRIVER": driver})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "minimal"], result.stdout


ADVERSARIAL_TRAINING_PROGRAM = """
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

def setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).to("openreg")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, capturable=True)
    return model, optimizer

def step(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()

torch.manual_seed(1)
x, y = torch.randn(64, 32).to("openreg"), torch.randint(0, 8, (64,)).to("openreg")
eager_model, eager_optimizer = setup()
eager = [step(eager_model, eager_optimizer, x, y).cpu() for _ in range(4)]
model, optimizer = setup()
losses = [step(model, optimizer, x, y).cpu()]
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    static_loss = step(model, optimizer, x, y)
for _ in range(3):
    graph.replay()
    losses.append(static_loss.cpu())
torch.testing.assert_close(torch.stack(losses), torch.stack(eager))
for p, q in zip(model.parameters(), eager_model.parameters()):
    torch.testing.assert_close(p.cpu(), q.cpu())
print("equal")
"""


@pytest.mark.skipif(DRIVER != "threaded_sim", reason="adversarial mode is threaded_sim's")
def test_captured_training_step_equals_eager_under_adversarial_scheduling():
    result = run_python(
        ADVERSARIAL_TRAINING_PROGRAM,
        env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=5,adversarial_max_delay_us=500"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["equal"], result.stdout


COLLECTIVE_IN_CAPTURE_PROGRAM = """
import os, socket, torch, torch.distributed as dist
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
dist.init_process_group(init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
x = torch.zeros(8, device="openreg")
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    y = x * 2
    dist.all_reduce(y)
    z = y + 1
sums = []
for step in range(3):  # every replay runs the collective again
    x.fill_(step)
    graph.replay()
    sums.append(z.sum().item())
print(sums)
try:
    with torch.openreg.graph(torch.openreg.Graph()):
        dist.barrier()
except RuntimeError as error:
    print(str(error).replace(chr(10), " "))
dist.all_reduce(x)  # the device and the process group keep working
print(x.sum().item())
dist.destroy_process_group()
"""


def test_collectives_replay_and_a_barrier_abandons_the_capture():
    # A captured collective takes its place in the process group's order at
    # every replay (before, its second replay waited for its turn for ever).
    result = run_python(COLLECTIVE_IN_CAPTURE_PROGRAM, timeout=120)
    assert result.returncode == 0, result.stderr
    sums, error, total = result.stdout.splitlines()[-3:]
    assert sums == "[8.0, 24.0, 40.0]", sums
    assert "the collective barrier is not allowed while openreg:0 is capturing a graph" in error, error
    assert "its work blocks the calling thread until it has run" in error, error
    assert "Move this call out of the captured region" in error, error
    assert float(total) == 16.0


HOST_POOL_PROGRAM = """
import os, time, torch
torch.set_num_threads(2)
def names():
    return [open(f"/proc/self/task/{t}/comm").read() for t in os.listdir("/proc/self/task")]
def host_workers():
    # OpenMP workers inherit the name of the thread that started them.
    main = open(f"/proc/self/task/{os.getpid()}/comm").read()
    return sum(name == main for name in names()) - 1
x = torch.ones(64, device="openreg")
# On a driver that runs work inline, that launch started autograd's device
# threads, which carry this thread's name until they rename themselves.
deadline = time.monotonic() + 10
while (AUTOGRAD_THREADS > sum(name.startswith("pt_autograd_") for name in names())
       and time.monotonic() < deadline):
    time.sleep(0.01)
graph = torch.openreg.Graph()
with torch.openreg.graph(graph):
    y = x * 2 + 1
before = host_workers()
(torch.ones(1 << 20) * 2).sum()  # a parallel CPU op: this thread now owns a pool
with_pool = host_workers()
for _ in range(2):  # the first replay learns where the device runs its work
    graph.replay()
    torch.openreg.synchronize()
after_replays = host_workers()
cpu = (torch.ones(1 << 20) * 2).sum().item()  # CPU work after the replays
print(with_pool - before, with_pool - after_replays, host_workers() - after_replays, cpu, y.sum().item())
"""


def test_replay_gives_back_the_replaying_threads_idle_openmp_workers():
    # Note [The replaying thread's OpenMP workers]: on a driver that runs
    # replays on threads of its own, the replaying thread's idle OpenMP pool
    # would make every OpenMP barrier in the process sleep; on a driver that
    # runs them inline, the replayed kernels use that pool, which stays.
    autograd_threads = torch.openreg.device_count() if DRIVER == "cpu_sim" else 0
    result = run_python(HOST_POOL_PROGRAM.replace("AUTOGRAD_THREADS", str(autograd_threads)))
    assert result.returncode == 0, result.stderr
    made, released, remade, cpu, out = result.stdout.split()
    assert int(made) == 1, result.stdout  # the CPU op's pool: one worker thread
    assert int(released) == (1 if DRIVER == "threaded_sim" else 0), result.stdout
    assert int(remade) == (1 if DRIVER == "threaded_sim" else 0), result.stdout  # CPU work makes a new one
    assert (float(cpu), float(out)) == (2.0 * (1 << 20), 192.0)


def two_layer_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4)).to("openreg")


def test_graphed_module_trains_like_the_eager_module():
    eager, graphed = two_layer_model(0), two_layer_model(0)
    sample = torch.randn(32, 8, device="openreg")
    graphed = torch.openreg.make_graphed_callables(graphed, (sample,))
    eager_opt = torch.optim.SGD(eager.parameters(), lr=0.1)
    graphed_opt = torch.optim.SGD(graphed.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(1)
    for _ in range(4):
        x = torch.randn(32, 8, generator=generator).to("openreg")
        target = torch.randn(32, 4, generator=generator).to("openreg")
        losses = []
        for model, opt in ((eager, eager_opt), (graphed, graphed_opt)):
            opt.zero_grad(set_to_none=True)
            loss = nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    for p, q in zip(eager.parameters(), graphed.parameters()):
        torch.testing.assert_close(p.cpu(), q.cpu())
    # The graphed module's layers run as replays: no matmul is dispatched.
    with OpCounter() as ops:
        graphed(x).sum().backward()
    assert not {"aten.addmm.default", "aten.mm.default", "aten.tanh.default"} & set(ops.names), ops.names


class OpCounter(TorchDispatchMode):
    """Records the names of the ATen ops dispatched in its scope."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_graphed_callables_chain_and_pass_gradients_to_their_inputs():
    first = two_layer_model(0)
    eager_first = two_layer_model(0)

    def scale_and_sum(h, w):
        return (h * w).sum(1), h.amax(1)

    sample_x = torch.randn(5, 8, device="openreg", requires_grad=True)
    sample_h = torch.randn(5, 4, device="openreg", requires_grad=True)
    sample_w = torch.randn(4, device="openreg", requires_grad=True)
    first, second = torch.openreg.make_graphed_callables(
        (first, scale_and_sum), ((sample_x,), (sample_h, sample_w)))
    x = torch.randn(5, 8, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    results = []
    for model, function in ((eager_first, scale_and_sum), (first, second)):
        dx = x.detach().to("openreg").requires_grad_()
        dw = w.detach().to("openreg").requires_grad_()
        total, peak = function(model(dx), dw)
        (total.sum() + 2 * peak.sum()).backward()
        results.append((total.cpu(), peak.cpu(), dx.grad.cpu(), dw.grad.cpu(),
                        [p.grad.cpu() for p in model.parameters()]))
    torch.testing.assert_close(results[1], results[0])


def test_graphed_module_runs_its_own_forward_in_the_other_training_mode():
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)).to("openreg")
    graphed = torch.openreg.make_graphed_callables(model, (torch.randn(4, 8, device="openreg"),))
    graphed.eval()
    x = torch.randn(3, 8, device="openreg")  # another shape: only the eager forward accepts it
    torch.testing.assert_close(graphed(x).cpu(), (x.cpu() @ model[0].weight.cpu().T) + model[0].bias.cpu())


def test_graphed_callables_reject_bad_arguments_clearly():
    model = two_layer_model(0)
    sample = torch.randn(2, 8, device="openreg")
    with pytest.raises(ValueError, match=r"sample argument 0 is on cpu, expected an openreg tensor"):
        torch.openreg.make_graphed_callables(model, (torch.randn(2, 8),))
    with pytest.raises(TypeError, match=r"sample argument 1 is a float; only tensors"):
        torch.openreg.make_graphed_callables(lambda a, b: a * b, (sample, 2.0))
    with pytest.raises(ValueError, match=r"one tuple of sample arguments per callable \(2\)"):
        torch.openreg.make_graphed_callables((model, model), ((sample,),))
    with pytest.raises(ValueError, match=r"num_warmup_iters must be an int >= 0, found -1"):
        torch.openreg.make_graphed_callables(model, (sample,), num_warmup_iters=-1)
    handle = model.register_forward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match=r"the Module has hooks registered \(_forward_hooks\)"):
        torch.openreg.make_graphed_callables(model, (sample,))
    handle.remove()
    with torch.autocast("openreg"):
        with pytest.raises(RuntimeError, match=r"autocast's weight cache is enabled"):
            torch.openreg.make_graphed_callables(model, (sample,))
    with pytest.raises(RuntimeError, match=r"appears to not have been used"):
        torch.openreg.make_graphed_callables(lambda a, b: a * 2, (sample.requires_grad_(), sample.clone()
                                                                      .requires_grad_()))
    graphed = torch.openreg.make_graphed_callables(two_layer_model(0), (torch.randn(2, 8, device="openreg"),))
    with pytest.raises(ValueError, match=r"argument 0 must match its sample \(torch.float32 \(2, 8\) on "
                                         r"openreg:0\), found torch.float32 \(3, 8\) on openreg:0"):
        graphed(torch.randn(3, 8, device="openreg"))
    # The device and the graphed callable still work after every error.
    assert graphed(torch.ones(2, 8, device="openreg")).shape == (2, 4)
    assert not torch.openreg.is_current_stream_capturing()
    assert (torch.ones(3, device="openreg") + 1).sum().item() == 6
