"""The oracle table (oracles.py) on the CPU alone: every oracle holds for the
CPU's own results of its OpInfo's samples, and fails on a corrupted result
(values out of support, a wrong stride, a partly dropped channel, ...)."""

import dataclasses
import functools
import warnings

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten

import oracles
import sample_checks

OPS = {op.full_name: op for op in op_db}


def _grad_inputs(sample):
    leaves = tree_flatten((sample.input, sample.args, sample.kwargs))[0]
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]


@functools.lru_cache(maxsize=None)
def cpu_cases(name: str, dtype: torch.dtype = torch.float64):
    """A Case per sample of OpInfo `name`, holding the CPU's result (and gradients where the oracle checks them).

    Made once per (name, dtype); the tests replace a case's fields, never change them."""
    op = OPS[name]
    oracle = oracles.ORACLES[name]
    tolerance = sample_checks.tolerance_for(op, dtype)
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in sample_checks.cpu_samples(op, dtype):
            inputs = sample_checks._detached_copy(sample)
            torch.manual_seed(sample_checks.SAMPLE_SEED)
            result = sample_checks._call(op, sample)
            case = oracles.Case(inputs.input, inputs.args, inputs.kwargs, result, result, tolerance.atol, tolerance.rtol)
            outputs = sample_checks._differentiable_outputs(sample.output_process_fn_grad(result))
            if outputs and oracle.gradients is not None and _grad_inputs(sample):
                case.cotangents = [torch.randn_like(o) for o in outputs]
                grads = torch.autograd.grad(outputs, _grad_inputs(sample), case.cotangents, allow_unused=True)
                case.gradients = [g.detach() if g is not None else None for g in grads]
            case.result = tree_map_detach(result)
            case.reference = case.result
            cases.append(case)
    return tuple(cases)


def tree_map_detach(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(tree_map_detach(v) for v in value)
    return value


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(oracles.ORACLES))
def test_the_cpus_own_results_hold(name, dtype):
    op = OPS[name]
    if dtype not in op.supported_dtypes("cpu"):
        pytest.skip(f"{name} has no {dtype} on the CPU")
    oracle = oracles.ORACLES[name]
    for case in cpu_cases(name, dtype):
        oracle.check(case)
        if case.gradients is not None:
            oracle.gradients(case)


def _first(name, predicate=lambda case: True, dtype=torch.float64):
    return next(case for case in cpu_cases(name, dtype) if predicate(case))


def _replaced(case, result):
    return dataclasses.replace(case, result=result)


def _fails(name, case, message=""):
    with pytest.raises(AssertionError, match=message):
        oracles.ORACLES[name].check(case)


def _big(case):
    return isinstance(case.result, torch.Tensor) and case.result.numel() >= 10


@pytest.mark.parametrize("name", ["empty", "empty_like", "empty_permuted", "empty_strided", "new_empty_strided"])
def test_structure_fails_on_wrong_strides(name):
    case = _first(name, lambda c: c.result.dim() >= 2 and c.result.numel() > 1)
    transposed = torch.empty_strided(case.result.shape, tuple(reversed(case.result.stride())), dtype=case.result.dtype)
    if transposed.stride() == case.result.stride():
        transposed = torch.empty_strided(case.result.shape, [s + 1 for s in case.result.stride()], dtype=case.result.dtype)
    _fails(name, _replaced(case, transposed), "strides")


def test_structure_fails_on_wrong_dtype_shape_and_requires_grad():
    case = _first("empty", lambda c: c.result.numel() > 1)
    _fails("empty", _replaced(case, case.result.to(torch.float32)), "dtype")
    _fails("empty", _replaced(case, case.result.flatten()[1:]), "shape")
    _fails("empty", _replaced(case, case.result.clone().requires_grad_()), "requires_grad")


def test_structure_fails_on_a_memory_format_not_kept():
    # No empty-family sample asks for a memory format: a case made here.
    channels_last = torch.empty(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    base = oracles.Case(channels_last, (), {"memory_format": torch.channels_last}, channels_last, channels_last)
    oracles.check_structure(base)
    with pytest.raises(AssertionError, match="channels_last"):
        oracles.check_structure(dataclasses.replace(base, result=channels_last.contiguous(), reference=channels_last.contiguous()))


@pytest.mark.parametrize(
    "name, corrupt, message",
    [
        ("uniform", lambda v: v + 100, "outside"),
        ("exponential", lambda v: -v, "outside"),
        ("geometric", lambda v: v + 0.5, "non-integer"),
        ("geometric", lambda v: v * 0, "outside"),
        ("log_normal", lambda v: -v, "<= 0"),
        ("cauchy", lambda v: v.fill_(float("nan")), "NaN"),
        ("normal.in_place", lambda v: v.fill_(float("inf")), "finite"),
        ("normal", lambda v: v.fill_(float("nan")), "finite"),
        ("randint", lambda v: v + 10, "outside"),
        ("randint_like", lambda v: v + 0.5, "non-integer"),
        ("rand_like", lambda v: v.fill_(float("nan")), "finite"),
        ("randn_like", lambda v: v.fill_(float("inf")), "finite"),
        ("bernoulli", lambda v: v + 0.5, "0 and 1"),
        ("multinomial", lambda v: v + 100, "outside"),
        ("nn.functional.dropout", lambda v: v * 3, "neither"),
        ("nn.functional.alpha_dropout", lambda v: v * 3, "neither"),
        ("nn.functional.rrelu", lambda v: v * 3, "slope|identity"),
        ("nn.functional.fractional_max_pool2d", lambda v: v + 0.25, "maximum"),
        ("nn.functional.fractional_max_pool3d", lambda v: v + 0.25, "maximum"),
    ],
)
def test_a_value_out_of_support_fails(name, corrupt, message):
    def corrupted(case):
        if isinstance(case.result, torch.Tensor):
            return corrupt(case.result.clone())
        return (corrupt(case.result[0].clone()), *case.result[1:])

    kept = lambda c: _big(c) and (  # noqa: E731  a sample where the op's random part acts
        not name.startswith("nn.functional.") or "dropout" not in name or 0 < c.kwargs.get("p", 0.5) < 1
    ) and c.kwargs.get("training", True)
    if name.startswith("nn.functional.fractional"):
        kept = lambda c: True  # noqa: E731
    case = _first(name, kept)
    _fails(name, _replaced(case, corrupted(case)), message)


def test_moments_are_checked_on_large_samples():
    case = _first("uniform", lambda c: c.result.numel() >= oracles.MOMENT_SAMPLES)
    low, high = case.args[:2]
    # Every value in [low, high], but all in the lower tenth: the mean is off.
    skewed = low + (case.result - low) / 10
    _fails("uniform", _replaced(case, skewed), "mean")


def test_bernoulli_with_certain_probabilities_is_exact():
    case = _first("bernoulli", _big)
    p = torch.zeros_like(case.input)
    p.view(-1)[0] = 1
    certain = dataclasses.replace(case, input=p)
    oracles.check_bernoulli(_replaced(certain, p.clone()))
    _fails("bernoulli", _replaced(certain, 1 - p), "probability 0 or 1")


def test_multinomial_without_replacement_draws_distinct_categories():
    case = _first("multinomial", lambda c: c.kwargs.get("replacement") is False and c.result.numel() > 1)
    repeated = case.result.clone()
    repeated[..., 1] = repeated[..., 0]
    _fails("multinomial", _replaced(case, repeated), "twice")


def test_multinomial_never_draws_a_zero_weight():
    case = _first("multinomial", lambda c: c.kwargs.get("replacement") is True)
    weights = case.input.clone()
    weights[..., int(case.result.flatten()[0])] = 0
    _fails("multinomial", dataclasses.replace(case, input=weights), "weight 0")


@pytest.mark.parametrize("name", ["nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.feature_alpha_dropout.with_train"])
def test_feature_dropout_drops_whole_channels(name):
    case = _first(name, lambda c: 0 < c.kwargs.get("p", 0.5) < 1 and c.kwargs.get("training", True))
    values = case.result.clone()
    # One element of a kept channel dropped, or of a dropped channel kept.
    x = case.input
    flat_v, flat_x = values.view(-1), x.reshape(-1)
    dropped_value = flat_v[(flat_v - flat_x / (1 - case.kwargs["p"])).abs() > 1e-6][0] if "alpha" not in name else None
    if "alpha" in name:
        p = case.kwargs["p"]
        a, b = oracles._alpha_affine(p)
        kept = (flat_v - (flat_x * a + b)).abs() <= 1e-9
        flat_v[kept.nonzero()[0]] = b - oracles._ALPHA * a
    else:
        kept = (flat_v != 0)
        flat_v[kept.nonzero()[0]] = dropped_value
    _fails(name, _replaced(case, values), "channel")


@pytest.mark.parametrize("name", ["nn.functional.dropout", "nn.functional.alpha_dropout"])
def test_dropout_with_p_0_is_the_identity(name):
    case = _first(name, lambda c: c.kwargs.get("p") == 0.0 and c.kwargs.get("training"))
    _fails(name, _replaced(case, case.result * 0.5), "identity")


@pytest.mark.parametrize(
    "name",
    [
        "nn.functional.dropout",
        "nn.functional.dropout2d",
        "nn.functional.alpha_dropout",
        "nn.functional.rrelu",
        "nn.functional.fractional_max_pool2d",
        "normal",
        "bernoulli",
    ],
)
def test_wrong_gradients_fail(name):
    case = _first(name, lambda c: c.gradients is not None and c.gradients[0] is not None and c.gradients[0].numel() > 1)
    wrong = [g + 1 if g is not None else g for g in case.gradients]
    with pytest.raises(AssertionError):
        oracles.ORACLES[name].gradients(dataclasses.replace(case, gradients=wrong))


@pytest.mark.parametrize("name", ["svd_lowrank", "pca_lowrank"])
def test_lowrank_fails_on_factors_that_are_not_orthonormal_or_do_not_reconstruct(name):
    case = _first(name)
    u, s, v = case.result
    _fails(name, _replaced(case, (u * 2, s, v)), "orthonormal")
    _fails(name, _replaced(case, (u, s * 2, v)), "reconstruction")
    _fails(name, _replaced(case, (u, s.flip(-1), v)), "descending|reconstruction")


def test_every_oracle_names_an_opinfo():
    assert set(oracles.ORACLES) <= set(OPS)
