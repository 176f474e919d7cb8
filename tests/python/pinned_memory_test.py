"""Pinned host memory through PyTorch's public API only (the allocator behind
it may change)."""

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset


def test_pin_memory_and_is_pinned():
    x = torch.randn(64)
    assert not x.is_pinned()
    pinned = x.pin_memory()
    assert pinned.is_pinned()
    assert pinned.data_ptr() != x.data_ptr()
    assert torch.equal(pinned, x)
    assert pinned.pin_memory().data_ptr() == pinned.data_ptr()  # already pinned: no copy


def test_views_and_slices_of_pinned_memory_are_pinned():
    pinned = torch.arange(100.0).pin_memory()
    assert pinned[10:20].is_pinned()
    assert pinned[99:].is_pinned()
    assert pinned.view(10, 10)[3].is_pinned()
    assert pinned.view(10, 10).t().is_pinned()
    assert pinned[::7].is_pinned()
    assert not pinned.clone().is_pinned()


def test_storage_pin_memory():
    storage = torch.arange(8, dtype=torch.float32).untyped_storage()
    assert not storage.is_pinned("openreg")
    pinned = storage.pin_memory("openreg")
    assert pinned.is_pinned("openreg")
    assert pinned.is_pinned()
    assert bytes(pinned) == bytes(storage)
    assert torch.tensor([], dtype=torch.float32).set_(pinned).tolist() == list(range(8))


def test_pinning_device_memory_is_an_error():
    with pytest.raises(RuntimeError, match="cannot pin"):
        torch.ones(2, device="openreg").pin_memory()


def test_pinned_copies_round_trip_non_blocking():
    source = torch.randn(1 << 16).pin_memory()
    on_device = source.to("openreg:1", non_blocking=True)
    back = torch.empty_like(source).pin_memory()
    back.copy_(on_device, non_blocking=True)
    torch.openreg.synchronize(1)
    assert torch.equal(back, source)


def test_dataloader_pins_batches_for_openreg():
    dataset = TensorDataset(torch.arange(40.0).view(20, 2), torch.arange(20))
    loader = DataLoader(dataset, batch_size=8, pin_memory=True, pin_memory_device="openreg")
    seen = 0
    for features, labels in loader:
        assert features.is_pinned() and labels.is_pinned()
        on_device = features.to("openreg", non_blocking=True)
        assert torch.equal(on_device.cpu(), features)
        seen += labels.numel()
    assert seen == 20


def test_dataloader_pins_in_worker_processes_too():
    dataset = TensorDataset(torch.arange(12.0))
    loader = DataLoader(dataset, batch_size=4, num_workers=2, pin_memory=True, pin_memory_device="openreg")
    batches = [batch for (batch,) in loader]
    assert all(batch.is_pinned() for batch in batches)
    assert torch.equal(torch.cat(batches), torch.arange(12.0))
