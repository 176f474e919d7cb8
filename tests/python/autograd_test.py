"""Autograd on openreg gives the CPU's gradients, and training matches the CPU."""

import copy
import importlib.util

import torch

from openreg_testing import assert_same, run_python


def load_example():
    spec = importlib.util.spec_from_file_location("train_example", "examples/train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gradients_equal_cpu():
    x = torch.randn(8, 5, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    dx = x.detach().openreg().requires_grad_()
    dw = w.detach().openreg().requires_grad_()
    torch.tanh(x @ w).pow(2).sum().backward()
    torch.tanh(dx @ dw).pow(2).sum().backward()
    assert dx.grad.is_openreg and dw.grad.is_openreg
    assert_same(dx.grad, x.grad)
    assert_same(dw.grad, w.grad)


def test_conv_and_loss_gradients_equal_cpu():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 2))
    device_model = copy.deepcopy(model).openreg()
    x, y = torch.randn(5, 3, 8, 8), torch.tensor([0, 1, 1, 0, 1])
    torch.nn.functional.cross_entropy(model(x), y).backward()
    torch.nn.functional.cross_entropy(device_model(x.openreg()), y.openreg()).backward()
    for cpu_param, device_param in zip(model.parameters(), device_model.parameters()):
        assert_same(device_param.grad, cpu_param.grad, rtol=1e-4, atol=1e-5)


def test_example_training_steps_match_cpu():
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
    assert device_losses[-1] < device_losses[0]


def test_process_exits_cleanly_after_backward():
    # PyTorch starts an autograd thread per openreg device on the first
    # backward; exiting while one is still starting used to abort the process
    # now and then (see _let_autograd_device_threads_start).
    for _ in range(6):
        result = run_python(
            """
            import torch
            x = torch.randn(10, device="openreg", requires_grad=True)
            x.sum().backward()
            print("done")
            """
        )
        assert (result.returncode, result.stdout.strip()) == (0, "done"), result.stderr
