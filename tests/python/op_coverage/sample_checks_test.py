"""The comparison harness itself (sample_checks.py): how samples reach the
device, when a sample counts as random, and what is still checked when the
CPU's values are no reference."""

import pytest
import torch
import torch_openreg  # noqa: F401
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import SampleInput

import sample_checks

OPS = {op.full_name: op for op in op_db}


def test_an_argument_naming_the_cpu_as_device_names_openreg_on_the_device():
    sample = SampleInput(torch.ones(2), args=("cpu", torch.float64), kwargs={"device": torch.device("cpu")})
    moved = sample_checks._on_device(sample, "openreg")
    assert moved.input.device.type == "openreg"
    assert moved.args == ("openreg", torch.float64)
    assert moved.kwargs == {"device": "openreg"}


def test_a_view_reaches_the_device_as_a_view_of_its_base():
    base = torch.arange(20.0)
    sample = SampleInput(base[5:15], args=((2, 2), (1, 2)), kwargs={"storage_offset": 10})
    moved = sample_checks._on_device(sample, "openreg")
    assert moved.input._base is not None
    assert moved.input.storage_offset() == 5
    # as_strided reads the storage around the view, as on the CPU.
    expected = torch.as_strided(sample.input, *sample.args, **sample.kwargs)
    assert torch.equal(torch.as_strided(moved.input, *moved.args, **moved.kwargs).cpu(), expected)


def test_views_sharing_a_base_share_it_on_the_device():
    base = torch.zeros(4)
    moved = sample_checks._on_device(SampleInput(base[:2], args=(base[2:],)), "openreg")
    moved.input.fill_(1)
    assert moved.args[0]._base is moved.input._base


def test_the_real_part_of_a_complex_tensor_stays_a_view_of_it():
    base = torch.randn(4, dtype=torch.complex64)
    view = base.real[:2]
    moved = sample_checks._on_device(SampleInput(view), "openreg")
    assert moved.input.dtype == torch.float32
    assert torch.equal(moved.input.cpu(), view)


def test_a_conjugated_view_keeps_its_conjugate_bit():
    base = torch.randn(3, 3, dtype=torch.complex64)
    view = base.mH
    moved = sample_checks._on_device(SampleInput(view), "openreg")
    assert torch.equal(moved.input.cpu(), view.resolve_conj())


def test_tensors_the_opinfo_makes_on_the_cpu_stay_there():
    op = OPS["tensor_split"]
    samples = sample_checks.cpu_samples(op, torch.float32)
    pinned = sample_checks.cpu_pinned_tensors(op, torch.float32, samples)
    assert pinned[0] == frozenset({1})  # the indices tensor, after the input
    moved = sample_checks._on_device(samples[0], "openreg", pinned[0])
    assert moved.input.device.type == "openreg"
    assert moved.args[0].device.type == "cpu"


def test_tensors_made_on_the_cpu_stay_there_under_a_sample_limit():
    # CI runs the op_db with a sample limit: the first samples must be kept
    # on the CPU as in the whole list.
    outcomes = sample_checks.check_op(OPS["tensor_split"], torch.float32, "openreg", limit=2)
    assert [o.status for o in outcomes] == ["passed"] * 2, [o.reason for o in outcomes]


def test_an_opinfo_without_integer_arguments_is_not_made_again():
    op = OPS["add"]
    samples = sample_checks.cpu_samples(op, torch.float32)[:3]
    assert sample_checks.cpu_pinned_tensors(op, torch.float32, samples) == [frozenset()] * 3


def test_an_op_that_seeds_the_generator_itself_is_random():
    from torch.testing._utils import wrapper_set_seed

    assert sample_checks.is_random(lambda: wrapper_set_seed(torch.randn, 3))
    assert not sample_checks.is_random(lambda: torch.ones(3))


def test_a_random_sample_of_another_shape_on_openreg_fails():
    outcome = sample_checks.outcome_of(
        0,
        check=lambda: sample_checks.compare(
            torch.zeros(3, device="openreg"), torch.ones(3), sample_checks.Tolerance(0, 0), "result"
        ),
        not_comparable="the OpInfo skips its CPU comparison: random",
        cpu_call=lambda: torch.ones(3),
        check_without_values=lambda: sample_checks.compare(
            torch.zeros(4, device="openreg"),
            torch.ones(3),
            sample_checks.Tolerance(0, 0, values=False),
            "result",
        ),
    )
    assert outcome.status == "failed"
    assert "shape [4]" in outcome.reason and "values not compared" in outcome.reason


def test_a_random_sample_like_the_cpus_but_for_its_values_is_skipped():
    outcome = sample_checks.outcome_of(
        0,
        check=lambda: sample_checks.compare(
            torch.zeros(3, device="openreg"), torch.ones(3), sample_checks.Tolerance(0, 0), "result"
        ),
        not_comparable=None,
        cpu_call=lambda: torch.randn(3),
        check_without_values=lambda: sample_checks.compare(
            torch.zeros(3, device="openreg"), torch.ones(3), sample_checks.Tolerance(0, 0, values=False), "result"
        ),
    )
    assert (outcome.status, outcome.reason) == ("skipped", "random: the CPU's values change with the seed")


def test_results_only_on_the_cpu_fail_even_when_values_are_not_compared():
    with pytest.raises(AssertionError, match="instead of openreg"):
        sample_checks.compare(torch.ones(3), torch.ones(3), sample_checks.Tolerance(0, 0, values=False), "result")


def test_out_tensors_start_alike_on_both_sides():
    # fft.ihfftn's CPU out= kernel reads what out holds (its out= result then
    # differs from the functional one): openreg must match it all the same.
    op = OPS["fft.ihfftn"]
    sample = sample_checks.cpu_samples(op, torch.float32)[3]  # a 1-D transform
    assert sample.input.dim() == 1
    for _ in range(3):
        assert [o.status for o in sample_checks.check_op(op, torch.float32, "openreg", limit=7)] == ["passed"] * 7


def _skipped_sample(by_property):
    def differs():
        raise AssertionError("result: values differ")

    return sample_checks.outcome_of(
        0, differs, "the OpInfo skips its CPU comparison: output is non-deterministic", lambda: None, lambda: None, by_property
    )


def test_a_sample_its_oracle_holds_for_passes_by_property():
    outcome = _skipped_sample(("uniform: values in [from, to]", lambda: None))
    assert (outcome.status, outcome.reason) == ("passed", "checked by property: uniform: values in [from, to]")


def test_a_sample_its_oracle_rejects_fails():
    def rejects():
        raise AssertionError("result: uniform: 3 value(s) outside [0, 1]")

    outcome = _skipped_sample(("uniform", rejects))
    assert outcome.status == "failed"
    assert "outside [0, 1]" in outcome.reason and "checked by property: uniform" in outcome.reason


def test_a_sample_whose_gradients_have_no_oracle_stays_skipped():
    def not_covered():
        raise sample_checks.NotCovered("its gradients have no oracle")

    outcome = _skipped_sample(("some op", not_covered))
    assert outcome.status == "skipped"
    assert outcome.reason.endswith("(its gradients have no oracle)")


@pytest.mark.parametrize("name", ["uniform", "empty_strided", "nn.functional.dropout2d", "multinomial", "bernoulli"])
def test_openregs_random_and_empty_results_hold_their_oracles(name):
    outcomes = sample_checks.check_op(OPS[name], torch.float32, "openreg")
    assert [o.status for o in outcomes] == ["passed"] * len(outcomes), [o.reason for o in outcomes if o.status != "passed"]
    assert any(o.reason.startswith("checked by property") for o in outcomes)
