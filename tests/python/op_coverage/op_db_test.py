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

import os
import warnings

import torch
import torch_openreg  # noqa: F401  (common_device_type looks for the backend when imported)
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

import coverage_run
import expectations
import sample_checks

# op_db (expectations.DTYPES) or op_db_extra_dtypes (expectations.EXTRA_DTYPES), set by BUILD.bazel.
SUITE = os.environ.get("OPENREG_OP_DB_SUITE", "op_db")
RECORDER = coverage_run.Recorder(os.environ.get("OPENREG_DRIVER", "cpu_sim"), SUITE, "op_results.json")
DTYPES = tuple(getattr(torch, name) for name in expectations.dtypes_of(SUITE))
# At most this many samples per (OpInfo, dtype), the first ones; all when unset (see README.md).
SAMPLE_LIMIT = int(os.environ["OPENREG_OP_DB_SAMPLE_LIMIT"]) if "OPENREG_OP_DB_SAMPLE_LIMIT" in os.environ else None
RECORDER.results["sample_limit"] = SAMPLE_LIMIT


class TestOpDb(TestCase):
    @ops(coverage_run.of_this_shard(op_db), allowed_dtypes=DTYPES)
    def test_samples(self, device, dtype, op):
        # @ops offers the dtypes the OpInfo declares for any device but CUDA;
        # the CPU is the reference, so only its dtypes are compared.
        if dtype not in op.supported_dtypes("cpu"):
            self.skipTest(f"the OpInfo declares no {dtype} support on the CPU")
        name = expectations.key(op.full_name, str(dtype).replace("torch.", ""))
        with warnings.catch_warnings():
            # Deprecation and performance warnings of the ops themselves.
            warnings.simplefilter("ignore")
            outcomes = sample_checks.check_op(op, dtype, device, SAMPLE_LIMIT)
        RECORDER.check(self, name, outcomes)


instantiate_device_type_tests(TestOpDb, globals(), only_for="privateuse1")
