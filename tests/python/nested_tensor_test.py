"""Nested tensors (torch.nested, strided layout) on openreg equal the CPU's.

A nested openreg tensor is a NestedTensorImpl over one openreg storage; its
ops run PyTorch's nested CPU kernels on device memory, and its sizes, strides
and offsets stay in host memory, as on CUDA (core/aten/layout_tensors.h).
"""

import pytest
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def components(*shapes, dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=generator).to(dtype) for shape in shapes]


def nested(tensors, device):
    return torch.nested.nested_tensor([t.to(device) for t in tensors])


def assert_nested_same(openreg_result, cpu_result):
    """A nested openreg tensor with the CPU result's components, bit for bit."""
    assert openreg_result.is_nested and openreg_result.device.type == "openreg"
    assert torch.equal(openreg_result._nested_tensor_size(), cpu_result._nested_tensor_size())
    for device_part, cpu_part in zip(openreg_result.unbind(), cpu_result.unbind()):
        assert device_part.device.type == "openreg"
        torch.testing.assert_close(device_part.cpu(), cpu_part, rtol=0, atol=0)


SHAPES = [(2, 5), (3, 5), (1, 5)]


def test_nested_tensor_is_made_on_the_device():
    parts = components(*SHAPES)
    made = torch.nested.nested_tensor(parts, device="openreg")
    assert made.is_nested and made.device.type == "openreg"
    assert made.dtype == torch.float32 and made.dim() == 3
    assert_nested_same(made, torch.nested.nested_tensor(parts))


def test_moves_between_cpu_and_device_keep_the_components():
    cpu = torch.nested.nested_tensor(components(*SHAPES))
    on_device = cpu.to("openreg")
    assert_nested_same(on_device, cpu)
    back = on_device.cpu()
    assert back.is_nested and back.device.type == "cpu"
    for back_part, cpu_part in zip(back.unbind(), cpu.unbind()):
        assert torch.equal(back_part, cpu_part)
    as_double = on_device.to(torch.float64)
    assert_nested_same(as_double, cpu.to(torch.float64))


def test_metadata_stays_in_host_memory():
    made = nested(components(*SHAPES), "openreg")
    for metadata in (made._nested_tensor_size(), made._nested_tensor_strides(),
                     made._nested_tensor_storage_offsets()):
        assert metadata.device.type == "cpu"
    assert made._nested_tensor_size().tolist() == [list(shape) for shape in SHAPES]


@pytest.mark.parametrize(
    "name, function",
    [
        ("add", lambda a, b: a + b),
        ("mul", lambda a, b: a * b),
        ("add a number", lambda a, b: a + 2.5),
        ("relu", lambda a, b: torch.relu(a)),
        ("gelu", lambda a, b: F.gelu(a)),
        ("softmax", lambda a, b: a.softmax(-1)),
        ("layer_norm", lambda a, b: F.layer_norm(a, (5,), torch.linspace(0.5, 1.5, 5, device=a.device),
                                                 torch.linspace(-1, 1, 5, device=a.device))),
        ("linear", lambda a, b: F.linear(a, torch.ones(4, 5, device=a.device), torch.arange(4.0, device=a.device))),
        ("matmul", lambda a, b: torch.matmul(a, b.transpose(1, 2))),
        ("transpose contiguous", lambda a, b: a.transpose(1, 2).contiguous()),
        ("clone", lambda a, b: a.clone()),
        ("abs", lambda a, b: a.abs()),
        ("neg", lambda a, b: -a),
        ("sgn", lambda a, b: a.sgn()),
        ("sin", lambda a, b: a.sin()),
        ("tanh", lambda a, b: a.tanh()),
        ("sqrt", lambda a, b: a.abs().sqrt()),
        ("silu", lambda a, b: F.silu(a)),
        ("gelu tanh", lambda a, b: F.gelu(a, approximate="tanh")),
        ("sub", lambda a, b: a - b),
        ("div", lambda a, b: a / (b.abs() + 1)),
        ("dropout in evaluation", lambda a, b: F.dropout(a, 0.5, training=False)),
        ("bmm", lambda a, b: torch.bmm(a, b.transpose(1, 2))),
        ("reshape", lambda a, b: a.reshape(3, -1, 5, 1)),
        ("unsqueeze squeeze", lambda a, b: a.unsqueeze(-1).squeeze(-1)),
        ("ge", lambda a, b: a >= 0),
        ("masked_fill", lambda a, b: a.masked_fill(b > 0, 0.0)),
        ("zeros_like", lambda a, b: torch.zeros_like(a)),
        ("fill_", lambda a, b: a.clone().fill_(3.0)),
        ("copy_", lambda a, b: a.clone().copy_(b)),
        ("to float64", lambda a, b: a.double()),
        ("to float16", lambda a, b: a.half()),
    ],
)
def test_ops_match_cpu(name, function):
    first, second = components(*SHAPES, seed=1), components(*SHAPES, seed=2)
    expected = function(nested(first, "cpu"), nested(second, "cpu"))
    result = function(nested(first, "openreg"), nested(second, "openreg"))
    assert_nested_same(result, expected)


@pytest.mark.parametrize(
    "name, function",
    [
        ("sum", lambda a: a.sum(-1, keepdim=True)),
        ("select", lambda a: a.select(0, 1)),
        ("chunk", lambda a: a.chunk(5, -1)),
        ("split_with_sizes", lambda a: a.split_with_sizes([2, 3], -1)),
        ("unbind", lambda a: a.unbind()),
    ],
)
def test_ops_with_several_or_dense_results_match_cpu(name, function):
    parts = components(*SHAPES, seed=3)
    expected, result = function(nested(parts, "cpu")), function(nested(parts, "openreg"))
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    result = result if isinstance(result, (tuple, list)) else [result]
    assert len(result) == len(expected)
    for device_part, cpu_part in zip(result, expected):
        if cpu_part.is_nested:
            assert_nested_same(device_part, cpu_part)
        else:
            assert device_part.device.type == "openreg"
            torch.testing.assert_close(device_part.cpu(), cpu_part, rtol=0, atol=0)


def test_to_padded_tensor_gives_a_dense_device_tensor():
    parts = components(*SHAPES)
    expected = nested(parts, "cpu").to_padded_tensor(-1.0)
    result = nested(parts, "openreg").to_padded_tensor(-1.0)
    assert not result.is_nested and result.device.type == "openreg"
    assert torch.equal(result.cpu(), expected)
    sized = nested(parts, "openreg").to_padded_tensor(0.0, (3, 4, 6))
    assert torch.equal(sized.cpu(), nested(parts, "cpu").to_padded_tensor(0.0, (3, 4, 6)))


def test_in_place_ops_write_the_device_memory():
    parts = components(*SHAPES)
    on_device, on_cpu = nested(parts, "openreg"), nested(parts, "cpu")
    on_device.mul_(3.0).add_(1.0)
    on_cpu.mul_(3.0).add_(1.0)
    assert_nested_same(on_device, on_cpu)


def test_unbind_gives_views_of_the_device_memory():
    made = nested(components(*SHAPES), "openreg")
    first = made.unbind()[0]
    assert first.device.type == "openreg" and first.shape == SHAPES[0]
    first.fill_(7.0)
    assert torch.equal(made.unbind()[0].cpu(), torch.full(SHAPES[0], 7.0))


def test_from_mask_and_padded_match_cpu():
    padded = torch.randn(3, 4, 6)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    expected = torch._nested_tensor_from_mask(padded, mask)
    result = torch._nested_tensor_from_mask(padded.to("openreg"), mask.to("openreg"))
    assert_nested_same(result, expected)
    assert torch.equal(result.to_padded_tensor(0.0).cpu(), expected.to_padded_tensor(0.0))
    example = torch.tensor([[4, 6], [2, 6], [1, 6]])
    assert_nested_same(torch._nested_from_padded(padded.to("openreg"), example),
                       torch._nested_from_padded(padded, example))


def test_view_from_buffer_shares_the_device_memory():
    buffer = torch.arange(12.0)
    sizes = torch.tensor([[2, 3], [2, 3]])
    strides = torch.tensor([[3, 1], [3, 1]])
    offsets = torch.tensor([0, 6])
    on_device = buffer.to("openreg")
    view = torch._nested_view_from_buffer(on_device, sizes, strides, offsets)
    assert_nested_same(view, torch._nested_view_from_buffer(buffer, sizes, strides, offsets))
    on_device.zero_()
    assert torch.equal(view.unbind()[1].cpu(), torch.zeros(2, 3))


def test_gradients_flow_through_nested_ops():
    parts = components(*SHAPES)
    def gradients(device):
        leaves = [p.to(device).requires_grad_() for p in parts]
        made = torch.nested.as_nested_tensor(leaves)
        weight = torch.linspace(-1, 1, 20, device=device).view(4, 5)
        out = F.linear(made, weight).relu().to_padded_tensor(0.0)
        out.sum().backward()
        return [leaf.grad for leaf in leaves]
    for device_grad, cpu_grad in zip(gradients("openreg"), gradients("cpu")):
        assert device_grad.device.type == "openreg"
        torch.testing.assert_close(device_grad.cpu(), cpu_grad, rtol=0, atol=0)


def test_an_op_without_a_nested_cpu_kernel_is_refused_with_the_way_out():
    made = nested(components(*SHAPES), "openreg")
    with pytest.raises(NotImplementedError, match="to_padded_tensor"):
        torch.cumsum(made, dim=2)
    # The device and the tensor are still usable after the error.
    assert_nested_same(made * 2, nested(components(*SHAPES), "cpu") * 2)


def test_mismatched_components_raise_the_cpus_error():
    first = nested(components((2, 5), (3, 5)), "openreg")
    second = nested(components((2, 5), (4, 5)), "openreg")
    with pytest.raises(RuntimeError) as device_error:
        first + second
    with pytest.raises(RuntimeError) as cpu_error:
        nested(components((2, 5), (3, 5)), "cpu") + nested(components((2, 5), (4, 5)), "cpu")
    assert str(cpu_error.value).splitlines()[0] in str(device_error.value)
    assert_nested_same(first + first, nested(components((2, 5), (3, 5)), "cpu") * 2)


def test_a_cpu_nested_tensor_among_device_ones_is_refused_with_the_fix():
    on_device = nested(components(*SHAPES), "openreg")
    on_cpu = nested(components(*SHAPES), "cpu")
    with pytest.raises(RuntimeError, match=r"nested CPU tensor .*Move it with .to\('openreg'\)"):
        on_device + on_cpu
    assert_nested_same(on_device + on_device, on_cpu + on_cpu)
