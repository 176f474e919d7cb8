"""The benchmark cases, built for either device, and how they are timed.

Shared by python_suite.py (openreg and in-process references) and
reference_process.py (CPU eager in a process that never loads openreg, eager
openreg in one that never replays a graph), so both time the same code.
"""

import importlib.util
import os
import time

import torch

import models

MiB = 2**20


def load_example(name="train"):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synchronize():
    if hasattr(torch, "openreg"):  # not loaded in the CPU reference process
        torch.openreg.synchronize()


def seconds_per_call(function, calls: int) -> float:
    """Seconds per call of function(), after a warm-up; waits for openreg work."""
    for _ in range(max(3, calls // 10)):
        function()
    synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        function()
    synchronize()
    return (time.perf_counter() - start) / calls


def tiny_ops(device):
    a = torch.ones(16, device=device)
    b = torch.ones(4, 4, device=device)
    return {
        "add, 16 floats": lambda: a + a,
        "matmul 4x4": lambda: b @ b,
        "view": lambda: b.view(16),
        "in-place mul_": lambda: a.mul_(1.0),
    }


def large_ops(device):
    x = torch.randn(1024, 1024).to(device)
    y = torch.randn(2048, 2048).to(device)
    image = torch.randn(8, 16, 64, 64).to(device)
    weight = torch.randn(32, 16, 3, 3).to(device)
    return {
        "matmul 1024^2": lambda: x @ x,
        "matmul 2048^2": lambda: y @ y,
        "conv2d 8x16x64x64, 3x3": lambda: torch.nn.functional.conv2d(image, weight, padding=1),
        "softmax 1024^2": lambda: x.softmax(dim=1),
    }


def allocations(device):
    def miss():
        torch.empty(16 * MiB, device=device)
        if device == "openreg":
            torch.openreg.empty_cache()  # every allocation reaches the driver

    return {
        "empty+drop 1 KiB (cache hit)": lambda: torch.empty(256, device=device),
        "empty+drop 64 MiB (cache hit)": lambda: torch.empty(16 * MiB, device=device),
        "empty+drop 64 MiB (cache miss)": miss,
    }


def training_step(device):
    example = load_example()
    features, labels = example.make_dataset(num_samples=1024)
    model = example.build_model().to(device)
    optimizer = example.make_optimizer(model)
    x, y = features[:256].to(device), labels[:256].to(device)
    return {"train step, examples/train.py model": lambda: example.train_step(model, optimizer, x, y)}


def compiled_training_step(device, compiled=True, mode=None):
    """A training step of the example's model, torch.compile'd (model and optimizer step) in `mode`.

    With mode="reduce-overhead" on openreg the model's forward and backward
    replay openreg graphs; the example's Adam keeps its step counts on the
    CPU, so its compiled step runs uncaptured (docs/compile.md).
    """
    example = load_example()
    features, labels = example.make_dataset(num_samples=1024)
    model = example.build_model().to(device)
    optimizer = example.make_optimizer(model)
    if compiled:
        model = torch.compile(model, mode=mode)
        optimizer.step = torch.compile(optimizer.step, mode=mode)
    x, y = features[:256].to(device), labels[:256].to(device)

    def step():
        return example.train_step(model, optimizer, x, y)

    step()  # compiles outside the timing
    step()  # reduce-overhead: the first call per shape is a warm-up, the second captures
    return step


def captured(function):
    """A torch.openreg.Graph of function() after one eager warm-up call, and its replay."""
    function()
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        function()
    return graph.replay


def graph_cases():
    """The graph-replay rows' work, each as a function that runs it eagerly on openreg: {name: step}."""
    example = load_example()
    features, labels = example.make_dataset(num_samples=1024)
    x, y = features[:256].to("openreg"), labels[:256].to("openreg")
    model = example.build_model().to("openreg")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    a = torch.ones(16, device="openreg")

    def chained_adds():
        for _ in range(100):
            a.add_(1.0)

    return {
        "train step, examples/train.py model (Adam capturable)": lambda: example.train_step(model, optimizer, x, y),
        "100 chained tiny in-place adds": chained_adds,
    }


def graph_replays():
    """graph_cases() captured: {name: replay}."""
    return {name: captured(step) for name, step in graph_cases().items()}


def graph_eager_steps(device):
    """graph_cases() run eagerly, the graph rows' reference (in a process that never replays, reference_process.py)."""
    assert device == "openreg"
    return graph_cases()


def compiled_transformer_block(device):
    blocks = load_example("transformer_block")
    block = torch.compile(blocks.build_block().to(device))
    batch = blocks.make_batch().to(device)

    def step():
        return blocks.forward_backward(block, batch)

    step()
    return step


def real_models(device):
    """The training steps of bench/models.py's models."""
    return {name: build(device) for name, build in models.MODELS.items()}


def small_mlp_adam(device):
    """The issue-17 workload: MLP 32->256->4, batch 256, Adam."""
    return {"small MLP step with Adam": models.mlp_adam(device)}


def cpu_step_after_openreg(device, openreg_steps=100):
    """small_mlp_adam's CPU step, in a process that has just trained the same model on openreg for
    `openreg_steps` steps: how issue 17 found openreg slowing the CPU work of its process."""
    assert device == "openreg"
    train = models.mlp_adam(device)
    for _ in range(openreg_steps):
        train()
    torch.openreg.synchronize()
    return small_mlp_adam("cpu")


# The suites whose CPU eager reference the reference process builds too.
CPU_SUITES = {"tiny ops": tiny_ops, "allocation": allocations, "large compute": large_ops,
              "training": training_step, "models": real_models, "host CPU": small_mlp_adam}
# Per reference process (reference_process.py): the suites it builds, by device.
REFERENCE_SUITES = {"cpu": CPU_SUITES, "openreg": {
    "graphs": graph_eager_steps,
    "models": real_models,
    "compiled": lambda device: {"train step": compiled_training_step(device, compiled=False)},
    "host CPU": cpu_step_after_openreg,
}}
