"""Recurrent layers on openreg equal the CPU's, forward and backward.

float32 LSTMs without projections run as the CPU runs them, one oneDNN layer
kernel per layer and direction (Note [Fused LSTM layers] in
core/aten/recurrent_layers.cc). Other LSTMs, GRUs and the cells call fused
cell kernels on accelerators, which openreg implements with ordinary ops
(core/aten/recurrent_ops.cc).
"""

import collections
import copy
import os

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils._python_dispatch import TorchDispatchMode

DRIVER = os.environ["OPENREG_DRIVER"]

TOLERANCES = {"rtol": 1e-5, "atol": 1e-6}

LAYERS = {
    "LSTM": lambda: torch.nn.LSTM(4, 8),
    "LSTM, 2 layers, bidirectional, batch_first": lambda: torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, batch_first=True),
    "LSTM, proj_size": lambda: torch.nn.LSTM(4, 8, proj_size=3),
    "LSTM, no bias": lambda: torch.nn.LSTM(4, 8, bias=False),
    "LSTM, 2 layers, batch_first": lambda: torch.nn.LSTM(4, 8, num_layers=2, batch_first=True),
    "LSTM, bidirectional, no bias": lambda: torch.nn.LSTM(4, 8, bidirectional=True, bias=False),
    "LSTM, 2 layers, bidirectional, proj_size": lambda: torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3),
    "GRU": lambda: torch.nn.GRU(4, 8),
    "GRU, 2 layers, bidirectional": lambda: torch.nn.GRU(4, 8, num_layers=2, bidirectional=True),
    "GRU, no bias": lambda: torch.nn.GRU(4, 8, bias=False),
    "RNN, tanh": lambda: torch.nn.RNN(4, 8),
    "RNN, relu": lambda: torch.nn.RNN(4, 8, nonlinearity="relu"),
}


def run(layer, inputs):
    """Outputs and the gradients of parameters and inputs of sum(outputs)."""
    inputs = [x.detach().requires_grad_() for x in inputs]
    outputs = layer(*inputs)
    flat = [t for t in torch.utils._pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor)]
    sum(t.float().sum() for t in flat).backward()
    grads = [p.grad for p in layer.parameters()] + [x.grad for x in inputs]
    return [t.detach().cpu() for t in flat], [g.cpu() for g in grads]


def assert_layer_matches_cpu(layer, inputs):
    device_layer = copy.deepcopy(layer).to("openreg")
    cpu_outputs, cpu_grads = run(layer, inputs)
    device_outputs, device_grads = run(device_layer, [x.to("openreg") for x in inputs])
    for device_out, cpu_out in zip(device_outputs, cpu_outputs):
        torch.testing.assert_close(device_out, cpu_out, **TOLERANCES)
    for device_grad, cpu_grad in zip(device_grads, cpu_grads):
        torch.testing.assert_close(device_grad, cpu_grad, **TOLERANCES)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_matches_cpu(name):
    torch.manual_seed(0)
    layer = LAYERS[name]()
    batch_first = layer.batch_first
    x = torch.randn(3, 5, 4) if not batch_first else torch.randn(5, 3, 4)
    assert_layer_matches_cpu(layer, [x])


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN, tanh"])
def test_layer_with_initial_state_matches_cpu(name):
    torch.manual_seed(1)
    layer = LAYERS[name]()
    x = torch.randn(6, 2, 4)
    h0 = torch.randn(1, 2, 8)
    state = (h0, torch.randn(1, 2, 8)) if name == "LSTM" else h0
    device_layer = copy.deepcopy(layer).to("openreg")
    expected, _ = layer(x, state)
    device_state = tuple(s.to("openreg") for s in state) if name == "LSTM" else state.to("openreg")
    result, _ = device_layer(x.to("openreg"), device_state)
    torch.testing.assert_close(result.cpu(), expected.detach(), **TOLERANCES)


@pytest.mark.parametrize("cell", [torch.nn.LSTMCell, torch.nn.GRUCell, torch.nn.RNNCell])
def test_cell_matches_cpu(cell):
    torch.manual_seed(2)
    assert_layer_matches_cpu(cell(4, 8), [torch.randn(3, 4)])


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_packed_sequence_matches_cpu(name):
    torch.manual_seed(3)
    layer = LAYERS[name]()
    device_layer = copy.deepcopy(layer).to("openreg")
    padded = torch.randn(5, 3, 4)
    lengths = torch.tensor([5, 3, 2])
    expected, _ = pad_packed_sequence(layer(pack_padded_sequence(padded, lengths))[0])
    result, result_lengths = pad_packed_sequence(device_layer(pack_padded_sequence(padded.to("openreg"), lengths))[0])
    torch.testing.assert_close(result.cpu(), expected.detach(), **TOLERANCES)
    assert result_lengths.tolist() == [5, 3, 2]


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
@pytest.mark.parametrize("mode", [torch.inference_mode, torch.no_grad])
def test_without_autograd_matches_cpu(name, mode):
    # In inference mode the kernels are called directly, not through their
    # autograd wrappers; under no_grad the wrappers run but the LSTM layer
    # keeps no workspace for a backward pass.
    torch.manual_seed(4)
    layer = LAYERS[name]()
    device_layer = copy.deepcopy(layer).to("openreg")
    x = torch.randn(4, 2, 4)
    with mode():
        torch.testing.assert_close(device_layer(x.to("openreg"))[0].cpu(), layer(x)[0], **TOLERANCES)


class OpCounter(TorchDispatchMode):
    """Counts the ATen ops that reach the device, by overload name."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def test_lstm_runs_as_one_op_per_layer_and_direction():
    # A silent fallback to the per-step cells would run about a dozen ops per
    # step and layer (hundreds here), forward and backward.
    torch.manual_seed(8)
    layer = torch.nn.LSTM(4, 8, num_layers=2, batch_first=True).to("openreg")
    x = torch.randn(3, 20, 4, device="openreg")
    with OpCounter() as counter:
        output, (h, c) = layer(x)
        (output.sum() + h.sum() + c.sum()).backward()
    counts = counter.counts
    assert counts["aten.mkldnn_rnn_layer"] == 2, counts
    assert counts["aten.mkldnn_rnn_layer_backward"] == 2, counts
    assert counts["aten._thnn_fused_lstm_cell"] == 0, counts
    assert sum(counts.values()) < 60, counts


def test_lstm_with_projections_keeps_the_cell_path():
    # The CPU runs projections through the generic decomposition too, so
    # openreg does the same (and agrees: test_layer_matches_cpu).
    layer = torch.nn.LSTM(4, 8, proj_size=3).to("openreg")
    with OpCounter() as counter:
        layer(torch.randn(5, 2, 4, device="openreg"))
    assert counter.counts["aten.mkldnn_rnn_layer"] == 0, counter.counts
    assert counter.counts["aten._thnn_fused_lstm_cell"] == 5, counter.counts


def test_lstm_under_autocast_runs_its_cells_in_the_autocast_dtype():
    # openreg's autocast policy (CUDA's) lists the cells, not the layer.
    layer = torch.nn.LSTM(4, 8).to("openreg")
    with torch.autocast("openreg", dtype=torch.float16), OpCounter() as counter:
        output, _ = layer(torch.randn(5, 2, 4, device="openreg"))
    assert output.dtype == torch.float16
    assert counter.counts["aten.mkldnn_rnn_layer"] == 0, counter.counts


def test_lstm_layers_of_new_shapes_match_cpu():
    # The layer's workspace size is learned per shape: every new sequence
    # length and batch must get its own.
    torch.manual_seed(9)
    layer = torch.nn.LSTM(4, 8)
    for steps, batch in ((3, 2), (7, 2), (7, 5), (3, 2)):
        layer.zero_grad(set_to_none=True)
        assert_layer_matches_cpu(layer, [torch.randn(steps, batch, 4)])


@pytest.mark.skipif(DRIVER == "cpu_sim", reason="cpu_sim runs every op to completion before returning")
def test_lstm_forward_and_backward_do_not_wait_for_the_device():
    layer = torch.nn.LSTM(4, 8, num_layers=2).to("openreg")
    x = torch.randn(6, 3, 4, device="openreg")
    layer(x)[0].sum().backward()  # learns the workspace sizes
    a = torch.randn(1024, 1024, device="openreg")
    torch.openreg.synchronize()
    for _ in range(8):
        a = a @ a / 1024
    output = layer(x)[0]
    output.sum().backward()
    # Had the layer waited for its result, the matmuls before it would be done.
    assert not torch.openreg.current_stream().query(), "the LSTM waited for the device"
    torch.openreg.synchronize()


def mkldnn_rnn_layer_arguments(device, mode=2, hidden=8, batch_sizes=()):
    gates = 4 * hidden
    tensors = [torch.randn(5, 2, 4), torch.randn(gates, 4), torch.randn(gates, hidden), torch.randn(gates),
               torch.randn(gates), torch.randn(2, hidden), torch.randn(2, hidden)]
    tensors = [t.to(device) for t in tensors]
    return [*tensors, False, list(batch_sizes), mode, hidden, 1, True, False, False, True]


def test_lstm_layer_kernel_matches_cpu_when_called_directly():
    torch.manual_seed(10)
    arguments = mkldnn_rnn_layer_arguments("cpu")
    expected = torch.ops.aten.mkldnn_rnn_layer(*arguments)
    device_arguments = [a.to("openreg") if isinstance(a, torch.Tensor) else a for a in arguments]
    result = torch.ops.aten.mkldnn_rnn_layer(*device_arguments)
    for device_out, cpu_out in zip(result[:3], expected[:3]):
        torch.testing.assert_close(device_out.cpu(), cpu_out, **TOLERANCES)
    assert result[3].shape == expected[3].shape


def test_lstm_layer_computes_its_results_in_their_outputs_memory():
    # Note [Fused LSTM layers]: once the first runs have learned which of the kernel's allocations become its
    # results, those are served from the outputs' memory: no result is made in host memory and copied (the
    # profiler sees the kernel's host allocations where it runs on the calling thread, cpu_sim's), and the device
    # memory of the output's and the workspace's sizes is theirs alone (hy and cy are of the size of the kernel's
    # small scratch buffers, which are device memory too).
    from torch.profiler import ProfilerActivity, profile

    arguments = mkldnn_rnn_layer_arguments("openreg", hidden=32)
    for _ in range(3):
        torch.ops.aten.mkldnn_rnn_layer(*arguments)
    torch.openreg.synchronize()
    torch.openreg.memory._record_memory_history(max_entries=1000)
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
            results = torch.ops.aten.mkldnn_rnn_layer(*arguments)
            torch.openreg.synchronize()
        snapshot = torch.openreg.memory._snapshot()
    finally:
        torch.openreg.memory._record_memory_history(enabled=None)
    result_sizes = {result.nbytes for result in results}
    assert len(results) == 4 and len(result_sizes) == 3, "the layer's output, hy and cy, and its workspace"
    host = [event.cpu_memory_usage for event in profiler.events() if event.cpu_memory_usage in result_sizes]
    assert not host, f"results made in host memory: {host} bytes"

    def block(nbytes):  # the caching allocator's size for a request (docs/memory.md): these are all small
        return -(-nbytes // 512) * 512

    expected = collections.Counter(block(results[i].nbytes) for i in (0, 3))
    device = collections.Counter(entry["size"] for trace in snapshot["device_traces"] for entry in trace
                                 if entry["action"] == "alloc" and entry["size"] in expected)
    assert device == expected, f"device allocations of the results' sizes: {device}, the outputs' {expected}"
    expected_values = torch.ops.aten.mkldnn_rnn_layer(*[a.cpu() if isinstance(a, torch.Tensor) else a
                                                        for a in arguments])
    for got, want in zip(results[:3], expected_values[:3]):
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)


def test_lstm_layer_results_equal_the_cpu_when_its_shapes_change_between_runs():
    # The results' allocations are learned on one shape and lent on the next (hy and cy are of one size); a wrong
    # guess must cost a copy, never a value.
    for steps, batch, input_size, hidden in [(5, 2, 4, 8), (7, 3, 6, 8), (7, 3, 6, 8), (4, 8, 4, 2), (5, 2, 4, 8)]:
        torch.manual_seed(steps * 100 + hidden)
        cpu = torch.nn.LSTM(input_size, hidden, num_layers=2)
        x = torch.randn(steps, batch, input_size)
        assert_layer_matches_cpu(cpu, [x])
        for _ in range(2):  # results dropped before their kernels ran
            copy.deepcopy(cpu).to("openreg")(x.to("openreg"))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.__setitem__(9, 3), r"LSTM layers \(mode 2\) only"),
        (lambda a: a.__setitem__(8, [2, 2, 1]), "packed sequences"),
        (lambda a: a.__setitem__(5, a[5][:1]), r"hx_ of shape \[batch, hidden_size\]"),
        (lambda a: a.__setitem__(1, a[1].double()), "float32 weights and states"),
        (lambda a: a.__setitem__(0, a[0][0]), "3-D float32 input"),
        (lambda a: a.__setitem__(6, a[6].cpu()), "found a CPU tensor"),
    ],
)
def test_lstm_layer_kernel_rejects_bad_arguments(change, message):
    arguments = mkldnn_rnn_layer_arguments("openreg")
    change(arguments)
    with pytest.raises(RuntimeError, match=message):
        torch.ops.aten.mkldnn_rnn_layer(*arguments)
    # The device keeps working.
    assert torch.ops.aten.mkldnn_rnn_layer(*mkldnn_rnn_layer_arguments("openreg"))[0].cpu().isfinite().all()


def test_double_backward_through_lstm_cell_matches_cpu():
    # With create_graph, autograd differentiates the cell's backward through
    # ordinary ops instead of the fused backward kernel.
    torch.manual_seed(5)
    cell = torch.nn.LSTMCell(3, 4)
    device_cell = copy.deepcopy(cell).to("openreg")
    results = []
    for module, device in ((cell, "cpu"), (device_cell, "openreg")):
        x = torch.randn(2, 3, generator=torch.Generator().manual_seed(6)).to(device).requires_grad_()
        (grad_x,) = torch.autograd.grad(sum(t.sum() for t in module(x)), x, create_graph=True)
        grad_x.pow(2).sum().backward()
        results.append([x.grad.cpu()] + [p.grad.cpu() for p in module.parameters()])
    for device_grad, cpu_grad in zip(results[1], results[0]):
        torch.testing.assert_close(device_grad, cpu_grad, **TOLERANCES)


def test_lstm_language_model_trains_like_the_cpu():
    torch.manual_seed(7)

    class LanguageModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(11, 6)
            self.lstm = torch.nn.LSTM(6, 8, num_layers=2)
            self.head = torch.nn.Linear(8, 11)

        def forward(self, tokens):
            return self.head(self.lstm(self.embedding(tokens))[0])

    cpu_model = LanguageModel()
    device_model = copy.deepcopy(cpu_model).to("openreg")
    tokens = torch.randint(0, 11, (7, 3))
    for step in range(3):
        losses = []
        for model, device in ((cpu_model, "cpu"), (device_model, "openreg")):
            model.zero_grad()
            logits = model(tokens[:-1].to(device))
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens[1:].to(device).flatten())
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5), f"step {step}"
