"""The minimal example driver, loaded by absolute path, trains examples/train.py.

    minimal_driver_training_test.py DRIVER_SO TRAIN_PY

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
os.environ["OPENREG_DRIVER"] = DRIVER

import importlib.util  # noqa: E402

import torch  # noqa: E402

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


def load_example():
    spec = importlib.util.spec_from_file_location("train_example", TRAIN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class MinimalDriverTrainingTest(unittest.TestCase):
    def test_driver_is_the_minimal_one(self):
        info = torch.openreg.driver_info()
        self.assertEqual(info.name, "minimal")
        self.assertEqual(torch.openreg.device_count(), 2)

    def test_training_steps_match_cpu(self):
        example = load_example()
        features, labels = example.make_dataset(num_samples=512)
        results = {}
        for device in ("cpu", "openreg"):
            model = example.build_model().to(device)
            optimizer = example.make_optimizer(model)
            x, y = features.to(device), labels.to(device)
            losses = [example.train_step(model, optimizer, x[i:i + 128], y[i:i + 128]).item() for i in range(0, 512, 128)]
            results[device] = (losses, [p.detach().cpu() for p in model.parameters()])
        cpu_losses, cpu_params = results["cpu"]
        device_losses, device_params = results["openreg"]
        torch.testing.assert_close(device_losses, cpu_losses)
        for cpu_param, device_param in zip(cpu_params, device_params):
            torch.testing.assert_close(device_param, cpu_param, rtol=1e-5, atol=1e-6)
        self.assertLess(device_losses[-1], device_losses[0])

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
