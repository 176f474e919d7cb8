"""Recurrent layers on openreg equal the CPU's, forward and backward.

ATen's LSTM and GRU layers call fused cell kernels on accelerators, which
openreg implements with ordinary ops (core/aten/recurrent_ops.cc).
"""

import copy

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

TOLERANCES = {"rtol": 1e-5, "atol": 1e-6}

LAYERS = {
    "LSTM": lambda: torch.nn.LSTM(4, 8),
    "LSTM, 2 layers, bidirectional, batch_first": lambda: torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, batch_first=True),
    "LSTM, proj_size": lambda: torch.nn.LSTM(4, 8, proj_size=3),
    "LSTM, no bias": lambda: torch.nn.LSTM(4, 8, bias=False),
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
def test_inference_mode_matches_cpu(name):
    # Without autograd the fused cells are called directly, not through their
    # autograd wrappers.
    torch.manual_seed(4)
    layer = LAYERS[name]()
    device_layer = copy.deepcopy(layer).to("openreg")
    x = torch.randn(4, 2, 4)
    with torch.inference_mode():
        torch.testing.assert_close(device_layer(x.to("openreg"))[0].cpu(), layer(x)[0], **TOLERANCES)


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
