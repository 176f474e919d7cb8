"""PyTorch's module database on openreg, compared input by input with the CPU.

`instantiate_device_type_tests` with torch's `@modules` makes one test per
ModuleInfo in `torch.testing._internal.common_modules.module_db`, dtype
(float32, float64) and mode (training, and evaluation too for modules whose
ModuleInfo says the two differ); each runs every input the ModuleInfo makes
through module_checks.py: forward, then the gradients of the inputs and
parameters. Known failures are listed per driver in
expected_failures/module_db/; any other failure fails the test. Each run
writes every input's outcome to module_results.json in Bazel's undeclared
outputs, which tools/op_coverage/generate_report.py turns into the reports.

Bazel shards this file (shard_count in BUILD.bazel): each shard takes every
N-th ModuleInfo.
"""

import os
import warnings

import torch
import torch_openreg  # noqa: F401  (common_device_type looks for the backend when imported)
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_modules import module_db, modules
from torch.testing._internal.common_utils import TestCase

import coverage_run
import expectations
import module_checks

RECORDER = coverage_run.Recorder(os.environ.get("OPENREG_DRIVER", "cpu_sim"), "module_db", "module_results.json")
DTYPES = (torch.float32, torch.float64)


def run_name(module_info, training: bool) -> str:
    """A ModuleInfo's name, with `.eval` for its evaluation-mode run when that differs from training."""
    return module_info.name + ("" if training or not module_info.train_and_eval_differ else ".eval")


class TestModuleDb(TestCase):
    @modules(coverage_run.of_this_shard(module_db), allowed_dtypes=DTYPES)
    def test_inputs(self, device, dtype, module_info, training):
        name = expectations.key(run_name(module_info, training), str(dtype).replace("torch.", ""))
        with warnings.catch_warnings():
            # Deprecation and performance warnings of the modules themselves.
            warnings.simplefilter("ignore")
            outcomes = module_checks.check_module(module_info, dtype, training)
        RECORDER.check(self, name, outcomes)


instantiate_device_type_tests(TestModuleDb, globals(), only_for="privateuse1")
