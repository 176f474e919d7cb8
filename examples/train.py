"""Trains a small MLP classifier on synthetic data, on openreg by default.

    python examples/train.py                  # on openreg (OPENREG_DRIVER picks the driver)
    python examples/train.py --device cpu     # the same run on the CPU, for comparison
    python examples/train.py --compile        # model and optimizer step through torch.compile

Only `import torch` is needed: the openreg backend loads through torch's
backend entry point. The data set is generated here (Gaussian clusters), so
nothing is downloaded.
"""

import argparse
import sys
import time

import torch
from torch import nn


def make_dataset(num_samples: int = 8192, num_features: int = 32, num_classes: int = 8, seed: int = 0):
    """Points scattered around one random centre per class; the clusters overlap."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.randn(num_classes, num_features, generator=generator) * 0.35
    labels = torch.randint(0, num_classes, (num_samples,), generator=generator)
    features = centres[labels] + torch.randn(num_samples, num_features, generator=generator)
    return features, labels


def build_model(num_features: int = 32, num_classes: int = 8, hidden: int = 128, seed: int = 0) -> nn.Module:
    """The MLP, initialised from `seed` on the CPU so every device starts equal."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Linear(num_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.Adam(model.parameters(), lr=1e-3)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """One optimisation step; returns the loss (still on the device)."""
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


def accuracy(model: nn.Module, features: torch.Tensor, labels: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(features).argmax(dim=1) == labels).float().mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="openreg", help="device to train on (default: openreg)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--compile", action="store_true", help="torch.compile the model and the optimizer step")
    args = parser.parse_args()
    show_progress = sys.stdout.isatty()

    device = torch.device(args.device)
    if device.type == "openreg":
        info = torch.openreg.driver_info()
        print(f"openreg driver: {info.name} {info.version} (ABI {info.abi_version}), "
              f"{torch.openreg.device_count()} devices")

    features, labels = make_dataset()
    split = len(labels) * 3 // 4
    train_x, train_y = features[:split].to(device), labels[:split].to(device)
    test_x, test_y = features[split:].to(device), labels[split:].to(device)
    model = build_model().to(device)
    optimizer = make_optimizer(model)
    if args.compile:
        model = torch.compile(model)
        optimizer.step = torch.compile(optimizer.step)
    steps_per_epoch = (split + args.batch_size - 1) // args.batch_size

    print(f"training on {device}: {split} samples, {steps_per_epoch} steps per epoch, {args.epochs} epochs")
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(split, generator=torch.Generator().manual_seed(epoch)).to(device)
        epoch_loss = torch.zeros((), device=device)
        for step in range(steps_per_epoch):
            batch = order[step * args.batch_size:(step + 1) * args.batch_size]
            epoch_loss += train_step(model, optimizer, train_x[batch], train_y[batch])
            if show_progress and ((step + 1) % 10 == 0 or step + 1 == steps_per_epoch):
                print(f"\r  epoch {epoch}: step {step + 1}/{steps_per_epoch}", end="", flush=True)
        mean_loss = epoch_loss.item() / steps_per_epoch
        print(f"\r  epoch {epoch}: loss {mean_loss:.4f}, test accuracy {accuracy(model, test_x, test_y):.3f}")
    elapsed = time.perf_counter() - start
    print(f"final test accuracy {accuracy(model, test_x, test_y):.3f} after {elapsed:.1f} s on {device}")


if __name__ == "__main__":
    main()
