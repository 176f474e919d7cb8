"""Moving modules and parameters between the CPU and openreg keeps their identity.

nn.Module.to() swaps a parameter's data in place (`param.data = moved`) only when
`torch._has_compatible_shallow_copy_type` says the two tensors allow it; otherwise
it puts a new Parameter in every module, which silently unties shared weights.
These tests hold openreg to what CUDA does.
"""

import copy

import pytest
import torch


class TiedLanguageModel(torch.nn.Module):
    """An embedding whose weight is also the output layer's, as in GPT-2."""

    def __init__(self, vocab=13, width=8):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, width)
        self.mixer = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embedding.weight

    def forward(self, tokens):
        return self.head(torch.tanh(self.mixer(self.embedding(tokens))))


@pytest.mark.parametrize(
    "other",
    [
        lambda: torch.zeros(2),
        lambda: torch.zeros(2, device="openreg"),
        lambda: torch.zeros(2, device="openreg:1"),
        lambda: torch.zeros(2, dtype=torch.int64, device="openreg"),
    ],
)
def test_openreg_is_shallow_copy_compatible_with_dense_tensors(other):
    openreg = torch.zeros(3, device="openreg")
    assert torch._has_compatible_shallow_copy_type(openreg, other())
    assert torch._has_compatible_shallow_copy_type(other(), openreg)


@pytest.mark.parametrize("other", [lambda: torch.zeros(2, device="meta"), lambda: torch.eye(2).to_sparse()])
def test_openreg_is_incompatible_where_cuda_is(other):
    # CUDA refuses meta and sparse data for a dense tensor; so does openreg.
    openreg = torch.zeros(3, device="openreg")
    assert not torch._has_compatible_shallow_copy_type(openreg, other())
    assert not torch._has_compatible_shallow_copy_type(other(), openreg)
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        torch.nn.Parameter(openreg).data = other()


def test_set_data_moves_a_parameter_both_ways():
    param = torch.nn.Parameter(torch.arange(4.0))
    param.data = param.data.to("openreg")
    assert param.device.type == "openreg" and isinstance(param, torch.nn.Parameter)
    assert param.requires_grad
    param.sum().backward()
    assert param.grad.is_openreg
    param.data = param.data.to("cpu")
    param.grad = None
    (param * 2).sum().backward()
    assert param.grad.device.type == "cpu"
    torch.testing.assert_close(param.detach(), torch.arange(4.0))


def test_module_to_keeps_parameters_tied_and_identical():
    model = TiedLanguageModel()
    parameters = dict(model.named_parameters(remove_duplicate=False))
    model.to("openreg")
    assert model.head.weight is model.embedding.weight
    for name, param in model.named_parameters(remove_duplicate=False):
        assert param is parameters[name], name
        assert param.is_openreg, name
    assert len(list(model.parameters())) == 3
    model.to("cpu")
    assert model.head.weight is model.embedding.weight
    assert all(param is parameters[name] for name, param in model.named_parameters(remove_duplicate=False))
    assert all(param.device.type == "cpu" for param in model.parameters())


def test_module_to_moves_gradients_and_keeps_hooks():
    model = TiedLanguageModel()
    seen = []
    model.embedding.weight.register_hook(lambda grad: seen.append(grad.device.type))
    model(torch.tensor([1, 2, 3])).sum().backward()
    cpu_grad = model.embedding.weight.grad.clone()
    model.to("openreg")
    assert model.embedding.weight.grad.is_openreg
    torch.testing.assert_close(model.embedding.weight.grad.cpu(), cpu_grad)
    model.zero_grad()
    model(torch.tensor([1, 2, 3], device="openreg")).sum().backward()
    assert seen == ["cpu", "openreg"]


def test_optimizer_built_before_the_move_still_trains_the_tied_weight():
    # With CUDA, an optimizer may be made before .to(); it holds the Parameter
    # objects, which must be the ones the moved module uses.
    model = TiedLanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.embedding.weight.detach().clone()
    model.to("openreg")
    model(torch.tensor([0, 5], device="openreg")).sum().backward()
    optimizer.step()
    assert not torch.equal(model.embedding.weight.detach().cpu(), before)


@pytest.mark.parametrize("optimizer_class", [torch.optim.SGD, torch.optim.Adam])
def test_tied_model_trains_like_the_cpu_step_by_step(optimizer_class):
    torch.manual_seed(0)
    cpu_model = TiedLanguageModel()
    device_model = copy.deepcopy(cpu_model).to("openreg")
    assert device_model.head.weight is device_model.embedding.weight
    cpu_optimizer = optimizer_class(cpu_model.parameters(), lr=0.05)
    device_optimizer = optimizer_class(device_model.parameters(), lr=0.05)
    tokens = torch.randint(0, 13, (6, 5))
    targets = torch.randint(0, 13, (6, 5))
    for step in range(5):
        losses = []
        for model, optimizer, device in ((cpu_model, cpu_optimizer, "cpu"), (device_model, device_optimizer, "openreg")):
            optimizer.zero_grad()
            logits = model(tokens.to(device))
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5), f"step {step}"
        for (name, cpu_param), device_param in zip(cpu_model.named_parameters(), device_model.parameters()):
            torch.testing.assert_close(device_param.detach().cpu(), cpu_param.detach(), rtol=1e-5, atol=1e-6, msg=f"{name} at step {step}")
    assert device_model.head.weight is device_model.embedding.weight
