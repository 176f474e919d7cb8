"""mm, bmm, addmm and baddbmm on openreg (core/aten/matmul_ops.cc): ATen's meta
function at the call and its CPU implementation on the stream, or the CPU
fallback for the calls that path leaves to it, give the CPU's results, dtypes
and errors in every form (functional, in-place, out=), on every layout, and a
training step that uses them matches the CPU's."""

import functools

import pytest
import torch

from openreg_testing import assert_same, raises_the_cpus_error_at_the_call, same_result_or_error

# Dtypes the direct path runs, and ones it leaves to the fallback.
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128, torch.float16, torch.bfloat16,
          torch.int64, torch.int32]


def sample(dtype, shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=generator).to(dtype)
    return torch.randint(-4, 5, shape, generator=generator).to(dtype)


def tolerances(dtype):
    # The same CPU implementation on the same values; BLAS may still split
    # the work differently on the stream's thread.
    if dtype in (torch.float16, torch.bfloat16):
        return {"atol": 1e-2, "rtol": 1e-2}
    return {}


# `function` on openreg gives the CPU's result within those tolerances, or the CPU's error.
same_as_cpu = functools.partial(same_result_or_error, tolerances=tolerances)


# name -> (function, shapes of its tensor arguments, in-place method or None).
OPS = {
    "mm": (torch.mm, [(5, 3), (3, 4)], None),
    "bmm": (torch.bmm, [(2, 5, 3), (2, 3, 4)], None),
    "addmm": (torch.addmm, [(5, 4), (5, 3), (3, 4)], "addmm_"),
    "baddbmm": (torch.baddbmm, [(2, 5, 4), (2, 5, 3), (2, 3, 4)], "baddbmm_"),
}
SCALED = ["addmm", "baddbmm"]


def arguments_of(name, dtype, shapes=None):
    _, default_shapes, _ = OPS[name]
    return [sample(dtype, shape, seed) for seed, shape in enumerate(shapes or default_shapes)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_functional(name, dtype):
    same_as_cpu(OPS[name][0], *arguments_of(name, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", SCALED)
def test_factors(name, dtype):
    beta, alpha = (2, 3) if not (dtype.is_floating_point or dtype.is_complex) else (0.5, -1.5)
    same_as_cpu(OPS[name][0], *arguments_of(name, dtype), beta=beta, alpha=alpha)
    # beta 0 ignores self, NaN included.
    if dtype.is_floating_point:
        self, first, second = arguments_of(name, dtype)
        same_as_cpu(OPS[name][0], torch.full_like(self, float("nan")), first, second, beta=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", SCALED)
def test_in_place_returns_self(name, dtype):
    method = OPS[name][2]

    def in_place(self, *rest, **factors):
        result = getattr(self, method)(*rest, **factors)
        assert result is self
        return self

    same_as_cpu(in_place, *arguments_of(name, dtype), beta=2, alpha=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.int64], ids=str)
@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("out_shape", ["empty", "sized"])
def test_out_resizes_and_returns_out(name, dtype, out_shape):
    def with_out(*tensors):
        reference = OPS[name][0](*tensors)
        out = torch.empty(0 if out_shape == "empty" else reference.shape, dtype=dtype, device=tensors[0].device)
        result = OPS[name][0](*tensors, out=out)
        assert result is out
        return out

    same_as_cpu(with_out, *arguments_of(name, dtype))


@pytest.mark.parametrize("name", OPS)
def test_out_of_another_shape_warns_and_resizes(name):
    arguments = [a.openreg() for a in arguments_of(name, torch.float32)]
    out = torch.zeros(7, device="openreg")
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        OPS[name][0](*arguments, out=out)
    assert_same(out, OPS[name][0](*arguments_of(name, torch.float32)))


@pytest.mark.parametrize("name", OPS)
def test_out_of_another_dtype_raises_the_cpus_error_at_the_call(name):
    def call(device):
        arguments = [a.to(device) for a in arguments_of(name, torch.float32)]
        OPS[name][0](*arguments, out=torch.empty(0, dtype=torch.float64, device=device))
    raises_the_cpus_error_at_the_call(call)
    assert_same(torch.mm(torch.ones(2, 2, device="openreg"), torch.ones(2, 2, device="openreg")),
                torch.full((2, 2), 2.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_broadcast_self(dtype):
    first, second = sample(dtype, (5, 3), 1), sample(dtype, (3, 4), 2)
    for shape in [(4,), (1, 4), (5, 1), (1, 1), ()]:
        same_as_cpu(torch.addmm, sample(dtype, shape, 3), first, second)
    batch1, batch2 = sample(dtype, (2, 5, 3), 1), sample(dtype, (2, 3, 4), 2)
    for shape in [(4,), (5, 4), (1, 5, 1), (2, 1, 4), ()]:
        same_as_cpu(torch.baddbmm, sample(dtype, shape, 3), batch1, batch2, beta=0.5)


def test_transposed_strided_and_expanded_operands():
    a, b = sample(torch.float32, (6, 8), 1), sample(torch.float32, (8, 6), 2)
    batch = sample(torch.float32, (3, 6, 8), 3)
    da, db, dbatch = a.openreg(), b.openreg(), batch.openreg()
    assert_same(torch.mm(da.t(), db.t()), torch.mm(a.t(), b.t()))
    assert_same(torch.mm(da[::2, 1::2], db[::2, ::3]), torch.mm(a[::2, 1::2], b[::2, ::3]))
    assert_same(torch.mm(da[:1].expand(4, 8), db), torch.mm(a[:1].expand(4, 8), b))
    assert_same(torch.addmm(da[:, :6].t(), db.t()[:, :6], da[:, 1:7]),
                torch.addmm(a[:, :6].t(), b.t()[:, :6], a[:, 1:7]))
    assert_same(torch.bmm(dbatch, dbatch.transpose(1, 2)), torch.bmm(batch, batch.transpose(1, 2)))
    assert_same(torch.bmm(dbatch.transpose(1, 2), dbatch), torch.bmm(batch.transpose(1, 2), batch))
    assert_same(torch.bmm(dbatch[:, ::2], dbatch[:, 1::2].transpose(1, 2)),
                torch.bmm(batch[:, ::2], batch[:, 1::2].transpose(1, 2)))
    assert_same(torch.baddbmm(dbatch[:, :, :6], dbatch, dbatch[0].t().expand(3, 8, 6)),
                torch.baddbmm(batch[:, :, :6], batch, batch[0].t().expand(3, 8, 6)))
    # Large enough for the BLAS paths, not only the small-matrix loops.
    big = sample(torch.float32, (4, 40, 50), 4)
    assert_same(torch.bmm(big.openreg(), big.openreg().transpose(1, 2)), torch.bmm(big, big.transpose(1, 2)))


def test_out_and_in_place_on_views():
    a, b = sample(torch.float32, (4, 3), 1), sample(torch.float32, (3, 4), 2)
    target = torch.zeros(4, 8)
    device_target = target.openreg()
    # A transposed out= and one that is a column slice of a bigger tensor.
    torch.mm(a, b, out=target[:, :4].t().t())
    torch.mm(a.openreg(), b.openreg(), out=device_target[:, :4].t().t())
    transposed_out = torch.empty(4, 4).t()
    device_transposed_out = transposed_out.openreg()
    torch.mm(a, b, out=transposed_out)
    torch.mm(a.openreg(), b.openreg(), out=device_transposed_out)
    assert_same(device_transposed_out, transposed_out)
    view = target[:, 4:]
    device_view = device_target[:, 4:]
    view.addmm_(a, b, alpha=2)
    device_view.addmm_(a.openreg(), b.openreg(), alpha=2)
    assert_same(device_target, target)
    # In place where self is also an operand.
    square = sample(torch.float32, (4, 4), 3)
    device_square = square.openreg()
    square.addmm_(square, square)
    device_square.addmm_(device_square, device_square)
    assert_same(device_square, square)


def test_matmul_and_linear_reach_the_products():
    x, w, bias = sample(torch.float32, (2, 5, 3), 1), sample(torch.float32, (4, 3), 2), sample(torch.float32, (4,), 3)
    same_as_cpu(torch.matmul, x, w.t())
    same_as_cpu(torch.matmul, x, x.transpose(1, 2))
    same_as_cpu(torch.matmul, sample(torch.float32, (2, 1, 5, 3), 4), sample(torch.float32, (3, 3, 2), 5))
    same_as_cpu(torch.nn.functional.linear, x, w, bias)
    same_as_cpu(torch.nn.functional.linear, x[0], w, bias)
    same_as_cpu(torch.mm, sample(torch.float32, (0, 3)), sample(torch.float32, (3, 4)))
    same_as_cpu(torch.addmm, sample(torch.float32, (2, 4)), sample(torch.float32, (2, 0)), sample(torch.float32, (0, 4)),
                beta=3)


def test_mixed_dtypes_and_conjugates_take_the_fallback_with_the_same_results():
    floats, doubles = sample(torch.float32, (3, 3), 1), sample(torch.float64, (3, 3), 2)
    same_as_cpu(torch.mm, floats, doubles)
    same_as_cpu(torch.addmm, doubles, floats, floats)
    complex_values = sample(torch.complex64, (3, 3), 3)
    conjugated = complex_values.openreg().conj()
    assert conjugated.is_conj()
    assert_same(torch.mm(conjugated, complex_values.openreg()), torch.mm(complex_values.conj(), complex_values))
    assert_same(torch.addmm(conjugated, conjugated, conjugated),
                torch.addmm(complex_values.conj(), complex_values.conj(), complex_values.conj()))
    with pytest.raises(RuntimeError, match="same device|devices"):
        torch.mm(floats.openreg(), floats)
    torch.openreg.synchronize()
    out = torch.empty(3, 3, dtype=torch.float64, device="openreg")
    same_as_cpu(lambda a, b, o: torch.mm(a, b, out=o), floats, floats, out.cpu())


@pytest.mark.parametrize("call, message", [
    (lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(4, 5, device=d)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda d: torch.mm(torch.ones(2, 3, 1, device=d), torch.ones(3, 5, device=d)), "self must be a matrix"),
    (lambda d: torch.bmm(torch.ones(2, 2, 3, device=d), torch.ones(3, 3, 5, device=d)), "batch1 and batch2|batch"),
    (lambda d: torch.bmm(torch.ones(2, 2, 3, device=d), torch.ones(2, 4, 5, device=d)), "Expected size for first two"),
    (lambda d: torch.addmm(torch.ones(2, 5, device=d), torch.ones(2, 3, device=d), torch.ones(2, 5, device=d)),
     r"mat1 and mat2 shapes cannot be multiplied"),
    (lambda d: torch.addmm(torch.ones(2, 5, device=d), torch.ones(2, 3, device=d), torch.ones(3, 5, device=d),
                           beta=1e300), "value cannot be converted to type float without overflow"),
    (lambda d: torch.baddbmm(torch.ones(2, 2, 5, device=d), torch.ones(2, 2, 3, device=d),
                             torch.ones(2, 3, 5, device=d), alpha=1e300),
     "value cannot be converted to type float without overflow"),
    (lambda d: torch.baddbmm(torch.ones(3, 2, 5, device=d), torch.ones(2, 2, 3, device=d),
                             torch.ones(2, 3, 5, device=d)), "self|expand|size"),
], ids=["mm-shapes", "mm-dims", "bmm-batches", "bmm-contraction", "addmm-shapes",
        "addmm-beta-overflow", "baddbmm-alpha-overflow", "baddbmm-self-shape"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call, message):
    with pytest.raises(RuntimeError, match=message) as cpu_error:
        call("cpu")
    # The CPU's message, raised by the calling thread before anything is
    # enqueued, on every driver, without a synchronization.
    with pytest.raises(RuntimeError, match=message) as device_error:
        call("openreg")
    assert str(device_error.value).split("\n")[0] == str(cpu_error.value).split("\n")[0]
    a = torch.ones(2, 2, device="openreg")
    assert_same(torch.mm(a, a), torch.full((2, 2), 2.0))


@pytest.mark.parametrize("call, message", [
    # ATen's CPU implementation checks this when it runs.
    (lambda d: torch.addmm(torch.ones(3, 5, device=d), torch.ones(2, 3, device=d), torch.ones(3, 5, device=d)),
     "expand"),
    # ATen's CPU wrapper checks this after the meta function.
    (lambda d: torch.ones(2, 3, device=d).addmm_(torch.ones(4, 3, device=d), torch.ones(3, 3, device=d)),
     "Bad in-place call"),
], ids=["addmm-self-broadcast", "addmm_-self-shape"])
def test_calls_left_to_the_fallback_raise_the_cpus_error(call, message):
    # The fallback raises by the next synchronization.
    with pytest.raises(RuntimeError, match=message) as cpu_error:
        call("cpu")
    with pytest.raises(RuntimeError, match=message) as device_error:
        call("openreg")
        torch.openreg.synchronize()
    assert str(cpu_error.value).split("\n")[0] in str(device_error.value)
    a = torch.ones(2, 2, device="openreg")
    assert_same(torch.addmm(a, a, a), torch.full((2, 2), 3.0))


def test_operands_stay_alive_until_the_product_ran():
    results = [torch.addmm(torch.full((64, 64), float(i), device="openreg"), torch.full((64, 32), 1.0, device="openreg"),
                           torch.full((32, 64), 0.5, device="openreg")) for i in range(20)]
    results += [torch.bmm(torch.full((4, 16, 8), float(i), device="openreg"),
                          torch.full((4, 8, 16), 1.0, device="openreg")) for i in range(20)]
    torch.openreg.synchronize()
    for i, result in enumerate(results[:20]):
        assert_same(result, torch.full((64, 64), i + 16.0))
    for i, result in enumerate(results[20:]):
        assert_same(result, torch.full((4, 16, 16), 8.0 * i))


def test_recycled_aliases_give_every_call_its_own_operands():
    # Products of changing dtypes, shapes, layouts and offsets, queued
    # without a synchronization: each call's CPU aliases are recycled ones
    # (Note [Recycled CPU aliases]) whenever the pool has them free, and
    # must still see exactly that call's memory and geometry.
    cases = []
    for i in range(120):
        dtype = [torch.float32, torch.float64, torch.complex64][i % 3]
        rows, inner = 2 + i % 5, 3 + i % 4
        whole = sample(dtype, (rows + 2, 2 * inner + 3), seed=i)
        first = whole[1:rows + 1, 3:3 + inner]  # offset and strided
        second = sample(dtype, (rows, inner), seed=1000 + i).t() if i % 2 else sample(dtype, (inner, rows), seed=i)
        cases.append((first, second))
    device_cases = [(first.to("openreg"), second.to("openreg")) for first, second in cases]
    results = [torch.mm(first, second) for first, second in device_cases]
    in_place = [torch.zeros(1, dtype=first.dtype, device="openreg").expand(first.shape[0], second.shape[1])
                .contiguous().addmm_(first, second) for first, second in device_cases]
    for (first, second), result, accumulated in zip(cases, results, in_place):
        expected = torch.mm(first, second)
        assert_same(result, expected)
        assert_same(accumulated, expected)


def test_in_place_products_in_and_out_of_inference_mode():
    # A tensor made in inference mode has other dispatch keys and no version
    # counter: aliases recycled across the switch must be of the mode they
    # run in, or the in-place product outside inference mode raises.
    a = torch.ones(3, 3, device="openreg")
    b = torch.full((3, 3), 2.0, device="openreg")
    total = torch.zeros(3, 3, device="openreg")
    for step in range(40):
        if step % 2:
            with torch.inference_mode():
                inside = torch.ones(3, 3, device="openreg")
                inside.addmm_(a, b)
                assert_same(inside, torch.full((3, 3), 7.0))
        total.addmm_(a, b)
    assert_same(total, torch.full((3, 3), 240.0))


def test_ordered_with_other_streams_work():
    stream = torch.openreg.Stream()
    a = torch.eye(64, device="openreg")
    b = torch.full((64, 64), 1.0 / 64, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(10):
            a = torch.addmm(a, a, b, beta=0.5)
        c = torch.bmm(a.expand(2, 64, 64), b.expand(2, 64, 64))
    torch.openreg.current_stream().wait_stream(stream)
    expected_a, expected_b = torch.eye(64), torch.full((64, 64), 1.0 / 64)
    for _ in range(10):
        expected_a = torch.addmm(expected_a, expected_a, expected_b, beta=0.5)
    assert_same(c, torch.bmm(expected_a.expand(2, 64, 64), expected_b.expand(2, 64, 64)))


class Attention(torch.nn.Module):
    """One attention block written with the products themselves: linear
    layers (addmm, mm in the backward), bmm and baddbmm."""

    def __init__(self, width=16):
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.bias = torch.nn.Parameter(torch.zeros(8, 8))

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.baddbmm(self.bias.expand(x.shape[0], 8, 8), q, k.transpose(1, 2), alpha=0.25)
        return self.out(torch.bmm(scores.softmax(-1), v)).sum(1)


def train(device, steps=4):
    torch.manual_seed(0)
    model = Attention().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(4, 8, 16).to(device), torch.randn(4, 16).to(device)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return [p.detach() for p in model.parameters()]


def test_training_step_as_on_the_cpu():
    for device_parameter, cpu_parameter in zip(train("openreg"), train("cpu")):
        assert_same(device_parameter, cpu_parameter)
