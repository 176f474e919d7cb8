"""PyTorch's OpInfo database on openreg, compared sample by sample with the CPU.

`instantiate_device_type_tests` makes one test per OpInfo for the openreg
device (torch's PrivateUse1TestBase); each runs every sample input in float32,
float64, int64 and bool (expectations.DTYPES; those of them the OpInfo declares
for the CPU) through sample_checks.py. Known failures are listed per driver in
expected_failures/; any other failure fails the test. Each run writes every
sample's outcome to op_results.json in Bazel's undeclared outputs, which
tools/op_coverage/generate_report.py turns into docs/op_coverage.md.

Bazel shards this file (shard_count in BUILD.bazel): each shard takes every
N-th OpInfo.
"""

import json
import os
import warnings

import torch
import torch_openreg  # noqa: F401  (common_device_type looks for the backend when imported)
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

import expectations
import sample_checks

DRIVER = os.environ.get("OPENREG_DRIVER", "cpu_sim")
KNOWN_FAILURES = expectations.load(DRIVER)
DTYPES = tuple(getattr(torch, name) for name in expectations.DTYPES)
RESULTS = {"driver": DRIVER, "ops": {}, "unexpected_passes": {}}


def ops_of_this_shard(all_ops):
    """Every N-th OpInfo for Bazel's shard N; all of them when not sharded."""
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    index = int(os.environ.get("TEST_SHARD_INDEX", "0"))
    status_file = os.environ.get("TEST_SHARD_STATUS_FILE")
    if status_file:
        # Tells Bazel this test shards itself.
        open(status_file, "a").close()
    return all_ops[index::total]


def save_results() -> None:
    outputs = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if not outputs:
        return
    with open(os.path.join(outputs, "op_results.json"), "w") as file:
        json.dump(RESULTS, file, indent=0, sort_keys=True)


def describe(outcomes) -> str:
    return "\n".join(f"  sample {o.index}: {o.reason}" for o in outcomes)


class TestOpDb(TestCase):
    @ops(ops_of_this_shard(op_db), allowed_dtypes=DTYPES)
    def test_samples(self, device, dtype, op):
        # @ops offers the dtypes the OpInfo declares for any device but CUDA;
        # the CPU is the reference, so only its dtypes are compared.
        if dtype not in op.supported_dtypes("cpu"):
            self.skipTest(f"the OpInfo declares no {dtype} support on the CPU")
        name = expectations.key(op.full_name, str(dtype).replace("torch.", ""))
        with warnings.catch_warnings():
            # Deprecation and performance warnings of the ops themselves.
            warnings.simplefilter("ignore")
            outcomes = sample_checks.check_op(op, dtype, device)
        known = KNOWN_FAILURES.get(name, {})
        RESULTS["ops"][name] = [[o.index, o.status, o.reason] for o in outcomes]
        passes = expectations.unexpected_passes(known, outcomes)
        if passes:
            RESULTS["unexpected_passes"][name] = [o.index for o in passes]
            warnings.warn(
                f"{name}: samples {[o.index for o in passes]} pass on {DRIVER} but are listed in "
                f"{expectations.path_for(DRIVER)}; remove them from the list."
            )
        save_results()
        failures = expectations.unexpected_failures(known, outcomes)
        if failures:
            self.fail(
                f"{name}: {len(failures)} sample(s) fail on {DRIVER} that are not in "
                f"{expectations.path_for(DRIVER)}:\n{describe(failures)}"
            )


instantiate_device_type_tests(TestOpDb, globals(), only_for="privateuse1")
