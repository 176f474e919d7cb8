"""Property checks for OpInfo samples whose CPU result is no reference for their values.

A random op's values, or an empty tensor's, differ from the CPU's by design,
so comparing them proves nothing; what the op promises still can be checked.
ORACLES maps an OpInfo's full name to the check of that promise: the
structure an empty-family op makes (shape, dtype, strides, ...), the support
and the parameters' effect of a sampling op (bernoulli's values in {0, 1},
randint's in [low, high), dropout keeping or zeroing each element, ...), the
window maximum of fractional max pooling, the orthonormal factors and
reconstruction of the randomized SVD. sample_checks.check_by_property runs
them on openreg's results; a sample they hold for counts as passed, with the
oracle's kind as its reason. A sample whose op has no oracle, or whose
gradients have none, stays skipped.

Each check raises AssertionError saying what does not hold. The checks are
deterministic: no statistical test but a mean within 6 standard errors, and
only on samples of at least MOMENT_SAMPLES values.
"""

import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional

import torch

# A mean is checked only on samples of at least this many values, within 6
# standard errors: a false alarm then has a probability below 1e-8.
MOMENT_SAMPLES = 100


@dataclasses.dataclass
class Case:
    """One call of an op and its result.

    `input`, `args` and `kwargs` are the values the op was called with, on the
    CPU, as they were before the call. `result` is what the op returned (on
    openreg in the op_db run). `reference` is the CPU's result for the same
    sample: its structure is the contract, never its values.
    `atol`/`rtol` bound the rounding of values computed from the inputs.
    `cotangents` and `gradients` (of the sample's inputs that require grad,
    in SampleInput order; None where unused) are set when gradients are checked.
    """

    input: Any
    args: tuple
    kwargs: dict
    result: Any
    reference: Any
    atol: float = 1e-5
    rtol: float = 1.3e-6
    cotangents: Optional[List[torch.Tensor]] = None
    gradients: Optional[List[Optional[torch.Tensor]]] = None


@dataclasses.dataclass(frozen=True)
class Oracle:
    """`check` verifies a result; `gradients` verifies the gradients of the
    sample's inputs (None: the op's gradients have no oracle, the sample stays
    skipped when it has any)."""

    kind: str
    check: Callable[[Case], None]
    gradients: Optional[Callable[[Case], None]] = None


def _fail(message: str) -> None:
    raise AssertionError(message)


def _values(value: Any) -> torch.Tensor:
    return value.detach().cpu()


def _tensor_result(case: Case) -> torch.Tensor:
    if not isinstance(case.result, torch.Tensor):
        _fail(f"expected a tensor result, found {type(case.result).__name__}")
    return _values(case.result)


def _close(actual: torch.Tensor, expected: torch.Tensor, case: Case, what: str) -> None:
    try:
        torch.testing.assert_close(actual, expected, atol=case.atol, rtol=case.rtol, equal_nan=True)
    except AssertionError as error:
        raise AssertionError(f"{what}: {error}") from None


def _within(values: torch.Tensor, low: float, high: float, what: str, high_inclusive: bool = True) -> None:
    if values.numel() == 0:
        return
    v = values.double()
    above = v > high if high_inclusive else v >= high
    bad = (v < low) | above | v.isnan()
    if bad.any():
        bracket = "]" if high_inclusive else ")"
        _fail(f"{what}: {int(bad.sum())} value(s) outside [{low}, {high}{bracket}, e.g. {v[bad].flatten()[0].item()}")


def _mean_near(values: torch.Tensor, mean: float, std: float, what: str) -> None:
    """The sample mean within 6 standard errors of `mean`, on samples large enough."""
    n = values.numel()
    if n < MOMENT_SAMPLES or not math.isfinite(std) or values.is_complex():
        return
    found = values.double().mean().item()
    if abs(found - mean) > 6 * std / math.sqrt(n):
        _fail(f"{what}: the mean of {n} values is {found}, expected {mean} within 6 standard errors ({std / math.sqrt(n)})")


def _integral(values: torch.Tensor, what: str) -> None:
    if values.is_floating_point() and (values != values.round()).any():
        _fail(f"{what}: non-integer values, e.g. {values[values != values.round()].flatten()[0].item()}")


# The empty family: the result's structure is the whole contract.


def check_structure(case: Case) -> None:
    """Shape, dtype, layout, strides, requires_grad and, where the sample asks
    for one, the memory format: all exactly as the CPU's result."""
    result, reference = case.result, case.reference
    if not isinstance(result, torch.Tensor):
        _fail(f"expected a tensor, found {type(result).__name__}")
    for what in ("shape", "dtype", "layout", "requires_grad"):
        if getattr(result, what) != getattr(reference, what):
            _fail(f"{what} is {getattr(result, what)}, the CPU's {getattr(reference, what)}")
    if result.stride() != reference.stride():
        _fail(f"strides are {result.stride()}, the CPU's {reference.stride()}")
    memory_format = case.kwargs.get("memory_format")
    if memory_format not in (None, torch.preserve_format) and not result.is_contiguous(memory_format=memory_format):
        _fail(f"not contiguous in {memory_format}, which the sample asks for")


# Sampling ops made in place on a tensor (the OpInfo's op is Tensor.<name>_).


def _draws(case: Case) -> torch.Tensor:
    values = _tensor_result(case)
    if values.shape != case.input.shape:
        _fail(f"shape {list(values.shape)}, the input's {list(case.input.shape)}")
    return values


def check_uniform(case: Case) -> None:
    low, high = (list(case.args) + [0.0, 1.0][len(case.args):])[:2]
    values = _draws(case)
    # [from, to]: from + (to - from) * u with u < 1 can round up to `to` in the dtype.
    _within(values, low, high, "uniform")
    _mean_near(values, (low + high) / 2, (high - low) / math.sqrt(12), "uniform")


def check_exponential(case: Case) -> None:
    rate = case.args[0] if case.args else case.kwargs.get("lambd", 1.0)
    values = _draws(case)
    # A draw rounds to 0 when -log(1 - u) does in the dtype.
    _within(values, 0.0, math.inf, "exponential")
    if values.is_floating_point() and values.isinf().any():
        _fail("exponential: infinite values")
    _mean_near(values, 1 / rate, 1 / rate, "exponential")


def check_geometric(case: Case) -> None:
    values = _draws(case)
    _within(values, 1, math.inf, "geometric")
    _integral(values, "geometric")


def check_log_normal(case: Case) -> None:
    values = _draws(case)
    if values.numel() and not (values > 0).all():
        _fail(f"log_normal: values <= 0, e.g. {values[~(values > 0)].flatten()[0].item()}")
    if values.isinf().any():
        _fail("log_normal: infinite values")


def check_cauchy(case: Case) -> None:
    values = _draws(case)
    if values.isnan().any():
        _fail("cauchy: NaN values")
    # float16/bfloat16 overflow where tan(pi (u - 1/2)) is large; wider dtypes do not.
    if values.dtype in (torch.float32, torch.float64) and values.isinf().any():
        _fail("cauchy: infinite values")


def check_normal_in_place(case: Case) -> None:
    mean, std = (list(case.args) + [0.0, 1.0][len(case.args):])[:2]
    values = _draws(case)
    if not values.isfinite().all():
        _fail("normal_: values that are not finite")
    if std == 0 and (values != mean).any():
        _fail(f"normal_: std 0 but values differ from the mean {mean}")
    _mean_near(values, mean, std, "normal_")


# torch.normal of tensors or numbers.


def _normal_parameters(case: Case):
    """(mean, std) of a `normal` sample (op(mean, std)) or a `normal.number_mean` one (op(std, mean))."""
    if isinstance(case.input, torch.Tensor):
        return case.input, case.args[0]
    if isinstance(case.args[0], torch.Tensor):
        return case.args[0], case.input
    return case.args[0], case.input


def _normal_check(case: Case) -> None:
    mean, std = _normal_parameters(case)
    values = _tensor_result(case)
    if not values.isfinite().all():
        _fail("normal: values that are not finite")
    mean_b = torch.as_tensor(mean, dtype=values.dtype).expand_as(values)
    std_b = torch.as_tensor(std, dtype=values.dtype).expand_as(values)
    zero = std_b == 0
    if (values[zero] != mean_b[zero]).any():
        _fail("normal: where std is 0 the value differs from the mean")


# Factories of random values.


def _randint_bounds(case: Case, like: bool):
    """(low, high) of randint(high, size) / randint(low, high, size), randint_like(t, high) / (t, low, high)."""
    numbers = list(case.args) if like else [case.input, *case.args]
    numbers = [n for n in numbers if isinstance(n, int)]
    return (0, numbers[0]) if len(numbers) == 1 else (numbers[0], numbers[1])


def _check_randint(case: Case, like: bool) -> None:
    low, high = _randint_bounds(case, like)
    values = _tensor_result(case)
    _within(values, low, high, "randint", high_inclusive=False)
    _integral(values, "randint")


def check_randint(case: Case) -> None:
    _check_randint(case, like=False)


def check_randint_like(case: Case) -> None:
    check_structure(case)
    _check_randint(case, like=True)


def check_randn(case: Case) -> None:
    check_structure(case)
    values = _tensor_result(case)
    if not values.isfinite().all():
        _fail("randn: values that are not finite")
    _mean_near(values, 0.0, 1.0, "randn")


def check_bernoulli(case: Case) -> None:
    p = case.input.detach()
    values = _tensor_result(case)
    if values.shape != p.shape:
        _fail(f"bernoulli: shape {list(values.shape)}, the probabilities' {list(p.shape)}")
    if ((values != 0) & (values != 1)).any():
        _fail("bernoulli: values other than 0 and 1")
    if (values[p == 0] != 0).any() or (values[p == 1] != 1).any():
        _fail("bernoulli: a draw with probability 0 or 1 went the other way")


def _zero_gradients(case: Case) -> None:
    for grad in case.gradients:
        if grad is not None and (grad.detach().cpu() != 0).any():
            _fail("the gradients must be zero (the draws do not depend on the input's values)")


def check_multinomial(case: Case) -> None:
    weights = case.input.detach()
    count = case.args[0]
    replacement = case.kwargs.get("replacement", case.args[1] if len(case.args) > 1 else False)
    values = _tensor_result(case)
    if values.dtype != torch.int64:
        _fail(f"multinomial: indices of dtype {values.dtype}, expected int64")
    rows_w = weights.reshape(-1, weights.shape[-1])
    rows = values.reshape(-1, count)
    if rows.shape[0] != rows_w.shape[0]:
        _fail(f"multinomial: {rows.shape[0]} rows of draws for {rows_w.shape[0]} rows of weights")
    _within(rows, 0, weights.shape[-1], "multinomial", high_inclusive=False)
    for draws, row in zip(rows, rows_w):
        if (row[draws] == 0).any():
            _fail(f"multinomial: drew a category of weight 0 (draws {draws.tolist()}, weights {row.tolist()})")
        if not replacement and draws.unique().numel() != draws.numel():
            _fail(f"multinomial without replacement drew a category twice: {draws.tolist()}")


# Dropout and rrelu: every element is the input scaled or the dropped value.


def _dropout_parameters(case: Case, trains_by_default: bool = True):
    """(p, training); F.dropout* train unless told not to, F.*alpha_dropout only when told to."""
    p = case.kwargs.get("p", case.args[0] if case.args else 0.5)
    training = case.kwargs.get("training", case.args[1] if len(case.args) > 1 else trains_by_default)
    return p, training


def _kept(case: Case, feature_dims: Callable[[int], int], kept_value: Callable, dropped_value: Callable):
    """The mask of kept elements: each element is kept_value(x) or dropped_value(x) (close within the
    tolerance), and for feature dropout the mask is constant over the last feature_dims(rank) dimensions."""
    x = case.input.detach()
    values = _tensor_result(case)
    if values.shape != x.shape:
        _fail(f"shape {list(values.shape)}, the input's {list(x.shape)}")
    # The op rounds its scale, the product and the shift each to the dtype: allow a few of its roundings.
    rtol = max(case.rtol, 4 * torch.finfo(x.dtype).eps) if x.is_floating_point() else case.rtol
    x, values = x.double(), values.double()
    kept_v, dropped_v = kept_value(x), dropped_value(x)
    is_kept = (values - kept_v).abs() <= case.atol + rtol * (x.abs() + kept_v.abs())
    is_dropped = (values - dropped_v).abs() <= case.atol + rtol * dropped_v.abs()
    neither = ~(is_kept | is_dropped)
    if neither.any():
        index = neither.nonzero()[0].tolist()
        _fail(
            f"element {index} is {values[tuple(index)].item()}: neither the kept value "
            f"{kept_v[tuple(index)].item()} nor the dropped one {dropped_v[tuple(index)].item()}"
        )
    # Where both fit (x at the dropped value), either is right.
    kept = is_kept & ~is_dropped
    dropped = is_dropped & ~is_kept
    constant = feature_dims(x.dim())
    if constant > 0:
        dims = tuple(range(x.dim() - constant, x.dim()))
        if (kept.any(dim=dims) & dropped.any(dim=dims)).any():
            _fail("a channel is partly kept and partly dropped: feature dropout drops whole channels")
    return is_kept, is_dropped


def _checked_edge_case(case: Case, p: float, training: bool, op: str) -> bool:
    """Checks the identity (p=0 or not training) and the all-dropped (p=1) cases of a dropout; True if it was one."""
    if not training or p == 0:
        _close(_tensor_result(case), case.input.detach(), case, f"{op} with p=0 or not training (identity)")
        return True
    if p == 1:
        if (_tensor_result(case) != 0).any():
            _fail(f"{op} with p=1: not every element is 0")
        return True
    return False


def _make_dropout(feature_dims: Callable[[int], int]):
    def check(case: Case) -> None:
        p, training = _dropout_parameters(case)
        if not _checked_edge_case(case, p, training, "dropout"):
            _kept(case, feature_dims, lambda x: x / (1 - p), torch.zeros_like)

    def gradients(case: Case) -> None:
        # out = x * m and dx = dy * m for the same multiplier m: dx * x == out * dy.
        _linear_multiplier_gradients(case)

    return check, gradients


def _linear_multiplier_gradients(case: Case) -> None:
    x = case.input.detach()
    values = _tensor_result(case)
    grad = case.gradients[0]
    if grad is None:
        _fail("no gradient for the input")
    _close(grad.detach().cpu() * x, values * case.cotangents[0], case, "gradient * input vs output * cotangent")


# SELU's fixed point: alpha * scale of SELU (ATen's alpha_dropout constant).
_ALPHA = 1.7580993408473766


def _alpha_affine(p: float):
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    return a, _ALPHA * a * p


def _make_alpha_dropout(feature_dims: Callable[[int], int]):
    def mask(case: Case) -> torch.Tensor:
        p, _ = _dropout_parameters(case, trains_by_default=False)
        a, b = _alpha_affine(p)
        return _kept(case, feature_dims, lambda x: x * a + b, lambda x: torch.full_like(x, b - _ALPHA * a))

    def check(case: Case) -> None:
        p, training = _dropout_parameters(case, trains_by_default=False)
        if not _checked_edge_case(case, p, training, "alpha dropout"):
            mask(case)

    def gradients(case: Case) -> None:
        p, training = _dropout_parameters(case, trains_by_default=False)
        grad = case.gradients[0]
        if not training or p == 0:
            _close(grad.detach().cpu(), case.cotangents[0], case, "identity's gradient")
            return
        if p == 1:
            if (grad.detach().cpu() != 0).any():
                _fail("alpha dropout with p=1: the gradient must be 0")
            return
        a, _ = _alpha_affine(p)
        is_kept, is_dropped = mask(case)
        got = grad.detach().cpu().double()
        scaled = case.cotangents[0].double() * a
        rtol = max(case.rtol, 4 * torch.finfo(grad.dtype).eps)
        as_kept = (got - scaled).abs() <= case.atol + rtol * scaled.abs()
        as_dropped = got.abs() <= case.atol
        # An element whose value fits both (its input near the dropped value) may be either.
        wrong = (is_kept & ~as_kept & ~(is_dropped & as_dropped)) | (is_dropped & ~is_kept & ~as_dropped)
        if wrong.any():
            _fail(f"alpha dropout gradient: {int(wrong.sum())} element(s) neither a * cotangent where kept nor 0 where dropped")

    return check, gradients


def check_rrelu(case: Case) -> None:
    lower = case.kwargs.get("lower", 1.0 / 8)
    upper = case.kwargs.get("upper", 1.0 / 3)
    x = case.input.detach()
    values = _tensor_result(case)
    if values.shape != x.shape:
        _fail(f"rrelu: shape {list(values.shape)}, the input's {list(x.shape)}")
    positive = x >= 0
    _close(values[positive], x[positive], case, "rrelu where x >= 0 (identity)")
    if not case.kwargs.get("training", False):
        _close(values[~positive], x[~positive] * ((lower + upper) / 2), case, "rrelu in evaluation")
        return
    negative = x[~positive]
    slope_tolerance = case.atol + case.rtol * negative.abs()
    out = values[~positive]
    # x < 0: out = a x with a in [lower, upper], so upper x <= out <= lower x.
    if ((out < negative * upper - slope_tolerance) | (out > negative * lower + slope_tolerance)).any():
        _fail(f"rrelu: a negative element's slope is outside [{lower}, {upper}]")


# Fractional max pooling: every output is the maximum of a kernel-sized window.


def _window_maxima(planes: torch.Tensor, kernel: List[int]) -> torch.Tensor:
    """For each input position, whether it is the maximum of some kernel-sized window containing it."""
    dims = len(kernel)
    pool = torch.nn.functional.max_pool2d if dims == 2 else torch.nn.functional.max_pool3d
    maxima = pool(planes.unsqueeze(1), kernel, stride=1).squeeze(1)
    marked = torch.zeros_like(planes, dtype=torch.bool)
    span = maxima.shape[1:]
    for offset in torch.cartesian_prod(*[torch.arange(k) for k in kernel]).reshape(-1, dims).tolist():
        window = (slice(None),) + tuple(slice(o, o + s) for o, s in zip(offset, span))
        marked[window] |= planes[window] == maxima
    return marked


def _fractional_parts(case: Case, dims: int):
    kernel = case.args[0] if case.args else case.kwargs["kernel_size"]
    kernel = [kernel] * dims if isinstance(kernel, int) else list(kernel)
    x = case.input.detach()
    result = case.result if isinstance(case.result, torch.Tensor) else case.result[0]
    indices = None if isinstance(case.result, torch.Tensor) else _values(case.result[1])
    planes = x.reshape(math.prod(x.shape[:-dims]), *x.shape[-dims:])
    out = _values(result).reshape(planes.shape[0], math.prod(result.shape[-dims:]))
    return kernel, planes, out, indices


def _make_fractional(dims: int):
    def check(case: Case) -> None:
        kernel, planes, out, indices = _fractional_parts(case, dims)
        flat = planes.reshape(planes.shape[0], math.prod(planes.shape[1:]))
        if flat.numel() == 0:
            return
        window_max = _window_maxima(planes, kernel).reshape(flat.shape)
        if indices is not None:
            indices = indices.reshape(out.shape)
            _within(indices, 0, flat.shape[1], "fractional max pool indices", high_inclusive=False)
            if not torch.equal(flat.gather(1, indices), out):
                _fail("fractional max pool: an output is not the input at its index")
            if not window_max.gather(1, indices).all():
                _fail("fractional max pool: an output is not the maximum of any kernel-sized window around its index")
            return
        # Without indices: the value is the input at some position that is a window maximum.
        found = ((flat.unsqueeze(1) == out.unsqueeze(2)) & window_max.unsqueeze(1)).any(dim=2)
        if not found.all():
            _fail("fractional max pool: an output is not the maximum of any kernel-sized window of the input")

    def gradients(case: Case) -> None:
        # The gradient routes each output's cotangent to the input position it came from:
        # for each value, the gradient summed over the positions holding it equals the
        # cotangent summed over the outputs holding it (exact where values repeat too).
        kernel, planes, out, _ = _fractional_parts(case, dims)
        flat = planes.reshape(planes.shape[0], math.prod(planes.shape[1:]))
        grad = case.gradients[0].detach().cpu().reshape(flat.shape)
        cot = case.cotangents[0].reshape(out.shape)
        in_output = (flat.unsqueeze(1) == out.unsqueeze(2)).any(dim=1)
        if (grad[~in_output] != 0).any():
            _fail("fractional max pool gradient: nonzero where the input is no output's value")
        by_input = ((flat.unsqueeze(1) == out.unsqueeze(2)) * grad.unsqueeze(1)).sum(dim=2)
        by_output = ((out.unsqueeze(1) == out.unsqueeze(2)) * cot.unsqueeze(1)).sum(dim=2)
        _close(by_input, by_output, case, "fractional max pool gradient per value")

    return check, gradients


# Randomized low-rank SVD and PCA: the properties torch's own tests check.

RANDOMIZED_EXCESS = 0.25


def _check_lowrank(case: Case, centered: bool) -> None:
    a, b = case.input.detach(), case.args[0].detach()
    matrix = a @ b.mT
    if centered:
        if case.kwargs.get("center", True):
            matrix = matrix - matrix.mean(dim=-2, keepdim=True)
    elif case.kwargs.get("M") is not None:
        matrix = matrix - case.kwargs["M"].detach()
    u, s, v = (_values(t) for t in case.result)
    q = s.shape[-1]
    eye = torch.eye(q, dtype=u.dtype)
    loose = dataclasses.replace(case, atol=max(case.atol, 10 * torch.finfo(s.dtype).eps ** 0.5), rtol=case.rtol)
    _close(u.mH @ u, eye.expand_as(u.mH @ u), loose, "U has orthonormal columns")
    _close(v.mH @ v, eye.expand_as(v.mH @ v), loose, "V has orthonormal columns")
    if (s < 0).any() or (s[..., :-1] < s[..., 1:]).any():
        _fail(f"singular values not non-negative and descending: {s.tolist()}")
    # Where the matrix's rank is at most q (its (q+1)-th singular value is 0 within the tolerance), the
    # best rank-q approximation is the matrix itself, and so must the result be. Where it is more (the
    # samples with M, and pca's centering), the randomized method with niter=2 comes within
    # RANDOMIZED_EXCESS * |A| of the best (the CPU's worst over 200 seeds of these samples: 0.091).
    norm = torch.linalg.matrix_norm(matrix)
    best = torch.linalg.svdvals(matrix)[..., q:].square().sum(dim=-1).sqrt()
    error = torch.linalg.matrix_norm(matrix - u @ torch.diag_embed(s).to(u.dtype) @ v.mH)
    exact = best <= loose.atol * (1 + norm)
    bound = torch.where(exact, loose.atol * (1 + norm), best + RANDOMIZED_EXCESS * norm)
    if (error > bound).any():
        _fail(f"reconstruction error {error.tolist()} above the bound {bound.tolist()} (best rank-{q} error {best.tolist()})")


def check_svd_lowrank(case: Case) -> None:
    _check_lowrank(case, centered=False)


def check_pca_lowrank(case: Case) -> None:
    _check_lowrank(case, centered=True)


# How many trailing dimensions one draw covers, by the input's rank: none for
# elementwise dropout; a channel's spatial dimensions for the feature variants
# (an unbatched input has one dimension less before them).
_dropout = _make_dropout(lambda rank: 0)
# dropout2d takes a 3-D input as (N, C, L): one draw per (N, C) in both cases.
_dropout2d = _make_dropout(lambda rank: rank - 2)
_dropout3d = _make_dropout(lambda rank: 3)
_alpha_dropout = _make_alpha_dropout(lambda rank: 0)
_feature_alpha_dropout = _make_alpha_dropout(lambda rank: rank - 2)
_fractional2d = _make_fractional(2)
_fractional3d = _make_fractional(3)

STRUCTURE = "structure (shape, dtype, layout, strides, requires_grad as the CPU's)"

# OpInfo full name -> its oracle.
ORACLES: Dict[str, Oracle] = {
    **{
        name: Oracle(STRUCTURE, check_structure)
        for name in ("empty", "empty_like", "empty_permuted", "empty_strided", "new_empty", "new_empty_strided")
    },
    "uniform": Oracle("uniform: values in [from, to], mean", check_uniform),
    "exponential": Oracle("exponential: values >= 0 and finite, mean", check_exponential),
    "geometric": Oracle("geometric: integers >= 1", check_geometric),
    "log_normal": Oracle("log_normal: values > 0 and finite", check_log_normal),
    "cauchy": Oracle("cauchy: no NaN, finite in float32/float64", check_cauchy),
    "normal.in_place": Oracle("normal_: finite, std 0 gives the mean, mean", check_normal_in_place),
    # PyTorch defines normal's gradients as zero: it does not differentiate through the draws.
    "normal": Oracle("normal: finite, std 0 gives the mean; zero gradients", _normal_check, _zero_gradients),
    "normal.number_mean": Oracle("normal: finite, std 0 gives the mean; zero gradients", _normal_check, _zero_gradients),
    "bernoulli": Oracle("bernoulli: values in {0, 1}, p=0 and p=1 exact; zero gradient", check_bernoulli, _zero_gradients),
    "multinomial": Oracle(
        "multinomial: indices in range, distinct without replacement, weight 0 never drawn", check_multinomial
    ),
    "randint": Oracle("randint: integers in [low, high)", check_randint),
    "randint_like": Oracle("randint_like: structure, integers in [low, high)", check_randint_like),
    # PyTorch's OpInfo named rand_like calls torch.randn_like.
    "rand_like": Oracle("randn_like (what the rand_like OpInfo calls): structure, finite values", check_randn),
    "randn_like": Oracle("randn_like: structure, finite values", check_randn),
    "randn": Oracle("randn: structure, finite values", check_randn),
    "nn.functional.dropout": Oracle("dropout: each element x / (1 - p) or 0; gradient", *_dropout),
    "nn.functional.dropout2d": Oracle("dropout2d: whole channels x / (1 - p) or 0; gradient", *_dropout2d),
    "nn.functional.dropout3d": Oracle("dropout3d: whole channels x / (1 - p) or 0; gradient", *_dropout3d),
    "nn.functional.alpha_dropout": Oracle("alpha_dropout: each element a x + b or the dropped value; gradient", *_alpha_dropout),
    "nn.functional.feature_alpha_dropout.with_train": Oracle(
        "feature_alpha_dropout: whole channels a x + b or the dropped value; gradient", *_feature_alpha_dropout
    ),
    "nn.functional.rrelu": Oracle(
        "rrelu: x where x >= 0, a x with a in [lower, upper] otherwise; gradient", check_rrelu, _linear_multiplier_gradients
    ),
    "nn.functional.fractional_max_pool2d": Oracle(
        "fractional_max_pool2d: each output a kernel-window maximum at its index; gradient routing", *_fractional2d
    ),
    "nn.functional.fractional_max_pool3d": Oracle(
        "fractional_max_pool3d: each output a kernel-window maximum at its index; gradient routing", *_fractional3d
    ),
    # Their gradients depend on the draws where q is below the rank: no oracle, those samples stay skipped.
    "svd_lowrank": Oracle("svd_lowrank: orthonormal U and V, best rank-q reconstruction", check_svd_lowrank),
    "pca_lowrank": Oracle("pca_lowrank: orthonormal U and V, best rank-q reconstruction", check_pca_lowrank),
}

