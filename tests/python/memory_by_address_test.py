"""Device memory handed out by address (Note [Device memory by address]): torch.openreg.caching_allocator_alloc
and caching_allocator_delete, which go through c10::Allocator::raw_allocate of the allocator registered for
PrivateUse1, as C++ libraries do, and storages that allocator makes."""

import pytest
import torch

o = torch.openreg
BLOCK = 512  # the caching allocator rounds requests up to this


def allocated():
    return o.memory_stats()["allocated_bytes.all.current"], o.memory_stats()["requested_bytes.all.current"]


def test_memory_counts_in_the_statistics_until_deleted():
    o.synchronize()
    before_allocated, before_requested = allocated()
    address = o.caching_allocator_alloc(3000)
    assert address != 0
    assert allocated() == (before_allocated + 3072, before_requested + 3000)
    assert o.memory.caching_allocator_alloc is o.caching_allocator_alloc
    o.caching_allocator_delete(address)
    assert allocated() == (before_allocated, before_requested)


def test_memory_is_stream_ordered_on_the_stream_asked_for():
    side = o.Stream()
    address = o.caching_allocator_alloc(5 * BLOCK, stream=side)
    assert torch.openreg._C._hooks_device_from_pointer(address) == side.device
    o.caching_allocator_delete(address)
    # Freed on `side`: the next allocation of that size made on `side` gets it back at once.
    with o.stream(side):
        reused = torch.empty(5 * BLOCK, dtype=torch.uint8, device="openreg")
    assert reused.data_ptr() == address
    side.synchronize()


def test_delete_frees_only_what_alloc_returned():
    tensor = torch.arange(1000, dtype=torch.float32, device="openreg")
    address = o.caching_allocator_alloc(64)
    o.caching_allocator_delete(address)
    before = allocated()
    with pytest.raises(RuntimeError, match="is not memory that torch.openreg.caching_allocator_alloc returned, or it was freed already; nothing was freed"):
        o.caching_allocator_delete(address)
    with pytest.raises(RuntimeError, match="a tensor's memory is freed with the tensor"):
        o.caching_allocator_delete(tensor.data_ptr())
    with pytest.raises(RuntimeError, match="caching_allocator_delete: 0x10 is not memory"):
        o.caching_allocator_delete(16)
    # Nothing was freed: the tensor keeps its memory and its values, and the device goes on working.
    assert allocated() == before
    assert torch.equal((tensor + 1).cpu(), torch.arange(1, 1001, dtype=torch.float32))


def test_bad_arguments_are_refused_with_what_was_expected():
    with pytest.raises(RuntimeError, match="size must be a number of bytes, 0 or more, got -1"):
        o.caching_allocator_alloc(-1)
    with pytest.raises(TypeError, match=r"size must be an int \(bytes\), got 1.5"):
        o.caching_allocator_alloc(1.5)
    with pytest.raises(TypeError, match="stream must be a torch.Stream of openreg, got 'default'"):
        o.caching_allocator_alloc(16, stream="default")
    with pytest.raises(ValueError, match="expected an openreg stream, got one of cpu"):
        o.caching_allocator_alloc(16, device=0, stream=torch.Stream(device="cpu"))
    with pytest.raises(TypeError, match="mem_ptr must be an address"):
        o.caching_allocator_delete(-5)
    with pytest.raises(ValueError, match="expected an openreg device"):
        o.caching_allocator_alloc(16, device="cpu")
    if o.device_count() > 1:
        with pytest.raises(ValueError, match="the stream is on openreg:0, not on device 1"):
            o.caching_allocator_alloc(16, device=1, stream=o.current_stream(0))
    address = o.caching_allocator_alloc(16)
    o.caching_allocator_delete(address)


def test_out_of_memory_raises_and_the_device_stays_usable():
    total = o.get_device_properties().total_memory
    before = allocated()
    with pytest.raises(torch.OutOfMemoryError, match="out of memory"):
        o.caching_allocator_alloc(2 * total)
    assert allocated() == before
    address = o.caching_allocator_alloc(BLOCK)
    o.caching_allocator_delete(address)


def test_storages_of_the_registered_allocator_work_like_any_other():
    # torch.UntypedStorage allocates through c10::GetAllocator(PrivateUse1), whose DataPtrs carry the address,
    # not the block (Note [Two device allocator instances]): work on another stream must own such memory. The
    # side stream is kept busy, and the current stream allocates and fills memory of the same size meanwhile:
    # had the queued multiply not owned the storage, its block would be handed out and overwritten first.
    before = allocated()
    side = o.Stream()
    storage = torch.UntypedStorage(4096, device="openreg")
    assert allocated()[0] == before[0] + 4096
    tensor = torch.empty(0, device="openreg").set_(storage, 0, (1024,), (1,))
    tensor.copy_(torch.arange(1024, dtype=torch.float32))
    busy = torch.randn(768, 768, device="openreg")
    side.wait_stream(o.current_stream())
    with o.stream(side):
        for _ in range(4):
            busy @ busy
        doubled = tensor * 2
    del tensor, storage
    overwritten = [torch.full((1024,), 7.0, device="openreg") for _ in range(4)]
    side.synchronize()
    assert torch.equal(doubled.cpu(), torch.arange(1024, dtype=torch.float32) * 2)
    del doubled, busy, overwritten
    o.synchronize()
    assert allocated() == before
