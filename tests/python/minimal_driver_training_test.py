"""The minimal example driver, loaded by absolute path, trains examples/train.py.

    minimal_driver_training_test.py DRIVER_SO TRAIN_PY ABI_VERSION

ABI_VERSION is the version the driver implements: "2.0" for minimal_driver.cc,
"1.0" for minimal_driver_v1.cc, which the core runs through its 1.x adapter.

Sets OPENREG_DRIVER to the driver's absolute path before torch is imported,
as a driver author would, then runs a few training steps on openreg and on the
CPU and compares them. A second run does the same in a fresh process with the
driver validation layer on, which must find no misuse by the core.
"""

import os
import subprocess
import sys
import unittest

DRIVER = os.path.abspath(sys.argv[1])
TRAIN_PY = os.path.abspath(sys.argv[2])
ABI_VERSION = sys.argv[3]
DRIVER_NAME = {"2.0": "minimal", "1.0": "minimal_v1"}[ABI_VERSION]
os.environ["OPENREG_DRIVER"] = DRIVER

import torch  # noqa: E402

import autograd_test  # noqa: E402  (reads examples/train.py from the runfiles)

TRAINING_STEPS = """
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("train_example", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
features, labels = example.make_dataset(num_samples=256)
model = example.build_model().to("openreg")
optimizer = example.make_optimizer(model)
x, y = features.to("openreg"), labels.to("openreg")
losses = [example.train_step(model, optimizer, x[i:i + 64], y[i:i + 64]).item() for i in range(0, 256, 64)]
print(losses)
"""


class MinimalDriverTrainingTest(unittest.TestCase):
    def test_driver_is_the_minimal_one(self):
        info = torch.openreg.driver_info()
        self.assertEqual(info.name, DRIVER_NAME)
        self.assertEqual(info.abi_version, ABI_VERSION)
        self.assertEqual(torch.openreg.device_count(), 2)

    @unittest.skipUnless(ABI_VERSION == "2.0", "stream_get_priority is required from ABI 2.0 on")
    def test_stream_priority_of_an_abi_2_0_driver(self):
        stream = torch.openreg.Stream(priority=0)
        self.assertEqual(stream.priority, 0)

    @unittest.skipUnless(ABI_VERSION == "1.0", "the 1.0 driver lacks stream_get_priority")
    def test_stream_priority_is_unsupported_by_an_abi_1_0_driver(self):
        # minimal_driver_v1 is built for ABI 1.0 on purpose; stream_get_priority came in 1.1.
        stream = torch.openreg.Stream(priority=0)
        with self.assertRaises(NotImplementedError) as caught:
            stream.priority
        message = str(caught.exception)
        self.assertIn("openreg driver 'minimal_v1' implements driver ABI 1.0", message)
        self.assertIn("stream_get_priority needs ABI 1.1", message)
        self.assertIn("update the driver", message)
        # Everything else about the stream works.
        with torch.openreg.stream(stream):
            total = (torch.ones(4, device="openreg") * 2).sum()
        stream.synchronize()
        self.assertTrue(stream.query())
        self.assertEqual(total.item(), 8.0)

    def test_training_steps_match_cpu(self):
        # The shipped drivers' check, run here on the minimal driver.
        autograd_test.test_example_training_steps_match_cpu()

    def test_training_under_the_validation_layer_finds_no_misuse(self):
        env = dict(os.environ, OPENREG_DRIVER=DRIVER, OPENREG_DRIVER_VALIDATION="1")
        result = subprocess.run([sys.executable, "-c", TRAINING_STEPS, TRAIN_PY], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        self.assertNotIn("openreg driver validation", result.stderr)
        self.assertEqual(len(eval(result.stdout.strip())), 4, result.stdout)
        # The variable is really read: a bad value stops the same run.
        env["OPENREG_DRIVER_VALIDATION"] = "banana"
        result = subprocess.run([sys.executable, "-c", TRAINING_STEPS, TRAIN_PY], env=env, capture_output=True, text=True, timeout=300)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("OPENREG_DRIVER_VALIDATION='banana' is not valid", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
