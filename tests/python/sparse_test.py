"""Sparse tensors on openreg, COO and compressed layouts, equal the CPU's.

A sparse openreg tensor is made of strided openreg tensors (indices and
values); its ops run PyTorch's sparse CPU kernels on device memory
(core/aten/layout_fallback.h).
"""

import os
import subprocess
import sys

import pytest
import torch

from openreg_testing import run_python

torch.manual_seed(0)


def dense_with_zeros(*shape, dtype=torch.float32):
    x = torch.randn(*shape).to(dtype)
    return x * (torch.rand(*shape) < 0.5)


def assert_sparse_same(openreg_result, cpu_result):
    """Same layout, device type, dtype, sparse structure and values."""
    assert openreg_result.device.type == "openreg", openreg_result.device
    assert openreg_result.layout == cpu_result.layout
    back = openreg_result.cpu()
    assert back.layout == cpu_result.layout
    torch.testing.assert_close(back.to_dense(), cpu_result.to_dense(), rtol=0, atol=0)
    if cpu_result.layout == torch.sparse_coo:
        assert openreg_result._indices().device.type == "openreg"
        assert openreg_result.is_coalesced() == cpu_result.is_coalesced()
        torch.testing.assert_close(back._indices(), cpu_result._indices(), rtol=0, atol=0)
    else:
        torch.testing.assert_close(back.values(), cpu_result.values(), rtol=0, atol=0)


# (layout, conversion from a strided tensor)
LAYOUTS = {
    "coo": lambda x: x.to_sparse(),
    "csr": lambda x: x.to_sparse_csr(),
    "csc": lambda x: x.to_sparse_csc(),
    "bsr": lambda x: x.to_sparse_bsr((2, 2)),
    "bsc": lambda x: x.to_sparse_bsc((2, 2)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.complex64])
def test_round_trip(layout, dtype):
    cpu = LAYOUTS[layout](dense_with_zeros(4, 6, dtype=dtype))
    device = cpu.to("openreg")
    assert_sparse_same(device, cpu)
    assert torch.equal(device.to_dense().cpu(), cpu.to_dense())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_conversion_on_the_device(layout):
    x = dense_with_zeros(4, 6)
    device = LAYOUTS[layout](x.to("openreg"))
    assert_sparse_same(device, LAYOUTS[layout](x))


@pytest.mark.parametrize("source", ["coo", "csr"])
@pytest.mark.parametrize("target", ["to_sparse", "to_sparse_csr", "to_sparse_csc"])
def test_conversion_between_layouts(source, target):
    cpu = LAYOUTS[source](dense_with_zeros(5, 4))
    assert_sparse_same(getattr(cpu.to("openreg"), target)(), getattr(cpu, target)())


def test_coalesce():
    indices = torch.tensor([[0, 1, 0, 2], [1, 0, 1, 2]])
    values = torch.tensor([1.0, 2.0, 3.0, 4.0])
    cpu = torch.sparse_coo_tensor(indices, values, (3, 3))
    device = torch.sparse_coo_tensor(indices.to("openreg"), values.to("openreg"), (3, 3))
    assert device.device.type == "openreg" and not device.is_coalesced()
    assert device._nnz() == 4
    assert_sparse_same(device.coalesce(), cpu.coalesce())


def test_constructors_keep_the_device_parts():
    indices = torch.tensor([[0, 1], [1, 0]], device="openreg")
    values = torch.tensor([1.0, 2.0], device="openreg")
    s = torch.sparse_coo_tensor(indices, values, (2, 2))
    assert s._values().data_ptr() == values.data_ptr()
    crow = torch.tensor([0, 1, 2], device="openreg")
    col = torch.tensor([1, 0], device="openreg")
    csr = torch.sparse_csr_tensor(crow, col, values, (2, 2))
    assert csr.device.type == "openreg"
    assert csr.to_dense().cpu().tolist() == [[0.0, 1.0], [2.0, 0.0]]
    empty = torch.empty(3, 4, layout=torch.sparse_coo, device="openreg")
    assert empty.device.type == "openreg" and empty._nnz() == 0


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_mm_and_addmm(layout):
    a = LAYOUTS[layout](dense_with_zeros(4, 5))
    b = torch.randn(5, 3)
    bias = torch.randn(4, 3)
    a_d, b_d, bias_d = a.to("openreg"), b.to("openreg"), bias.to("openreg")
    torch.testing.assert_close(torch.sparse.mm(a_d, b_d).cpu(), torch.sparse.mm(a, b))
    torch.testing.assert_close(torch.addmm(bias_d, a_d, b_d, beta=0.5, alpha=2).cpu(), torch.addmm(bias, a, b, beta=0.5, alpha=2))
    torch.testing.assert_close((a_d @ b_d).cpu(), a @ b)


def test_sparse_times_sparse():
    a = dense_with_zeros(4, 5).to_sparse()
    b = dense_with_zeros(5, 3).to_sparse()
    assert_sparse_same(torch.sparse.mm(a.to("openreg"), b.to("openreg")), torch.sparse.mm(a, b))


def test_sampled_addmm():
    mask = dense_with_zeros(4, 3).to_sparse_csr()
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    expected = torch.sparse.sampled_addmm(mask, a, b, beta=0.5, alpha=2)
    result = torch.sparse.sampled_addmm(mask.to("openreg"), a.to("openreg"), b.to("openreg"), beta=0.5, alpha=2)
    assert_sparse_same(result, expected)


def test_elementwise_and_reductions():
    x = dense_with_zeros(4, 6).to_sparse()
    d = x.to("openreg")
    assert_sparse_same(d * 2, x * 2)
    assert_sparse_same(d + d, x + x)
    assert_sparse_same(torch.sin(d), torch.sin(x))
    assert_sparse_same(d.abs(), x.abs())
    torch.testing.assert_close(torch.sparse.sum(d).cpu(), torch.sparse.sum(x))
    assert_sparse_same(torch.sparse.sum(d, dim=0), torch.sparse.sum(x, dim=0))
    assert_sparse_same(torch.sparse.softmax(d, dim=1), torch.sparse.softmax(x, dim=1))
    csr = x.to_sparse_csr()
    assert_sparse_same(csr.to("openreg") * 3, csr * 3)
    torch.testing.assert_close(csr.to("openreg").sum().cpu(), csr.sum())


def test_in_place_ops_update_the_device_tensor():
    x = dense_with_zeros(4, 6).to_sparse()
    d = x.to("openreg")
    d.mul_(3)
    x.mul_(3)
    assert_sparse_same(d, x)
    d.add_(d)
    x.add_(x)
    assert_sparse_same(d, x)
    d.zero_()
    assert d._nnz() == 0 and d.to_dense().cpu().abs().sum() == 0


def test_backward_through_sparse_mm():
    a = dense_with_zeros(4, 5).to_sparse().requires_grad_()
    b = torch.randn(5, 3, requires_grad=True)
    torch.sparse.mm(a, b).sum().backward()
    a_d = a.detach().to("openreg").requires_grad_()
    b_d = b.detach().to("openreg").requires_grad_()
    torch.sparse.mm(a_d, b_d).sum().backward()
    torch.testing.assert_close(b_d.grad.cpu(), b.grad)
    torch.testing.assert_close(a_d.grad.cpu().to_dense(), a.grad.to_dense())


def test_printing():
    s = torch.tensor([[0.0, 1.5], [2.0, 0.0]]).to_sparse().to("openreg")
    text = repr(s)
    assert "device='openreg:0'" in text and "layout=torch.sparse_coo" in text and "1.5" in text


def test_unsupported_op_gives_a_clear_error_and_the_device_keeps_working():
    s = dense_with_zeros(3, 3).to_sparse().to("openreg")
    with pytest.raises(NotImplementedError, match=r"(?s)not supported for sparse COO tensors on openreg.*no SparseCPU kernel.*to_dense\(\)"):
        torch.cumsum(s, 0)
    csr = dense_with_zeros(3, 3).to_sparse_csr().to("openreg")
    with pytest.raises(NotImplementedError, match="sparse compressed"):
        torch.cumsum(csr, 0)
    # The stream is fine afterwards.
    assert torch.equal(s.to_dense().cpu(), s.cpu().to_dense())


def test_mixing_a_cpu_operand_is_refused():
    s = dense_with_zeros(3, 3).to_sparse().to("openreg")
    with pytest.raises(RuntimeError, match=r"found a CPU tensor of shape \[3, 2\].*Move it with .to\('openreg'\)"):
        torch.sparse.mm(s, torch.randn(3, 2))


def test_bad_indices_are_reported_at_the_call():
    # The kernel's own check, raised where the op was called even on the
    # asynchronous driver: sparse ops wait for their kernel.
    indices = torch.tensor([[0, 5]], device="openreg")
    values = torch.tensor([1.0, 2.0], device="openreg")
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        torch.sparse_coo_tensor(indices, values, (3,), check_invariants=True)
    assert torch.ones(2, device="openreg").sum().item() == 2.0


def test_launch_blocking_run():
    # With OPENREG_LAUNCH_BLOCKING=1 every kernel is waited for: a deferred
    # failure could not hide. The same ops must give the same results.
    result = run_python(
        """
        import torch
        x = (torch.randn(4, 5) * (torch.rand(4, 5) < 0.5))
        y = torch.randn(5, 3)
        for convert in (lambda t: t.to_sparse(), lambda t: t.to_sparse_csr()):
            s = convert(x)
            out = torch.sparse.mm(s.to("openreg"), y.to("openreg"))
            torch.testing.assert_close(out.cpu(), torch.sparse.mm(s, y))
            assert torch.equal(s.to("openreg").cpu().to_dense(), x)
        try:
            torch.cumsum(x.to_sparse().to("openreg"), 0)
        except NotImplementedError as error:
            print("refused:", "no SparseCPU kernel" in str(error))
        print("ok")
        """,
        env={"OPENREG_LAUNCH_BLOCKING": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "refused: True" in result.stdout and "ok" in result.stdout


def test_invariant_checks_wait_for_the_stream():
    # With PyTorch's sparse invariant checks on (as in its TestCase), making
    # a compressed tensor validates its indices: that must happen in stream
    # order, not on the calling thread while the indices are still being
    # written (it once did, failing at random on threaded_sim).
    mask = torch.eye(64).to_sparse_csr()
    a, b = torch.randn(64, 32), torch.randn(32, 64)
    expected = torch.sparse.sampled_addmm(mask, a, b, beta=0.2, alpha=0.6)
    with torch.sparse.check_sparse_tensor_invariants():
        for _ in range(10):
            big = torch.randn(256, 256, device="openreg")
            big @ big  # keeps the stream busy
            result = torch.sparse.sampled_addmm(mask.to("openreg"), a.to("openreg"), b.to("openreg"), beta=0.2, alpha=0.6)
            assert_sparse_same(result, expected)
