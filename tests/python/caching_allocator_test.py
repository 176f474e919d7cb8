"""The caching allocator seen from Python: statistics byte for byte, no driver
allocations in a steady training loop, safe reuse across streams, out of
memory after releasing the cache, OPENREG_ALLOC_CONF, the pinned host cache,
and torch.accelerator reporting the same numbers as torch.openreg."""

import json
import threading

import pytest
import torch

from openreg_testing import run_python

MiB = 2**20

# A fresh process for exact numbers: nothing else has allocated yet.
STATS_SCRIPT = """
import json
import torch

o = torch.openreg
KEYS = ["allocated_bytes.all.current", "requested_bytes.all.current",
        "reserved_bytes.all.current", "active_bytes.all.current",
        "allocation.all.current", "segment.all.current",
        "inactive_split_bytes.all.current", "allocated_bytes.all.peak",
        "allocated_bytes.small_pool.current", "allocated_bytes.large_pool.current",
        "num_device_alloc", "num_device_free"]
steps = {}
def snap(name):
    stats = o.memory_stats()
    steps[name] = {key: stats[key] for key in KEYS}

a = torch.empty(1000, dtype=torch.uint8, device="openreg")
snap("small")
b = torch.empty(3 * 2**20, dtype=torch.uint8, device="openreg")
snap("large")
v = a[10:]
w = a.view(10, 100)
snap("views")
del a
snap("del_base_with_views_alive")
del v, w
snap("del_views")
o.reset_peak_memory_stats()
snap("reset_peak")
del b
snap("del_large")
o.empty_cache()
snap("empty_cache")
print(json.dumps(steps))
"""


def test_statistics_follow_a_scripted_sequence_exactly():
    result = run_python(STATS_SCRIPT)
    assert result.returncode == 0, result.stderr
    steps = json.loads(result.stdout)
    small_tail = 2 * MiB - 1024  # rest of the 2 MiB small segment
    large_tail = 20 * MiB - 3 * MiB  # rest of the 20 MiB large segment

    def expect(step, **values):
        got = steps[step]
        for key, value in values.items():
            assert got[key.replace("__", ".")] == value, (step, key, got)

    expect("small", allocated_bytes__all__current=1024, requested_bytes__all__current=1000,
           reserved_bytes__all__current=2 * MiB, active_bytes__all__current=1024,
           allocation__all__current=1, segment__all__current=1,
           inactive_split_bytes__all__current=small_tail, num_device_alloc=1,
           allocated_bytes__small_pool__current=1024)
    large = dict(allocated_bytes__all__current=1024 + 3 * MiB,
                 requested_bytes__all__current=1000 + 3 * MiB,
                 reserved_bytes__all__current=22 * MiB, allocation__all__current=2,
                 segment__all__current=2, inactive_split_bytes__all__current=small_tail + large_tail,
                 allocated_bytes__large_pool__current=3 * MiB, num_device_alloc=2)
    expect("large", **large)
    expect("views", **large)  # views allocate nothing
    expect("del_base_with_views_alive", **large)  # views keep the storage
    # The freed small block stays whole for reuse (Note [Reuse before merge]),
    # but counts as merged with the small segment's tail (Note [Free memory
    # counted as merged]): a wholly free segment, not an inactive split block.
    expect("del_views", allocated_bytes__all__current=3 * MiB, requested_bytes__all__current=3 * MiB,
           reserved_bytes__all__current=22 * MiB, inactive_split_bytes__all__current=large_tail,
           allocated_bytes__all__peak=1024 + 3 * MiB, num_device_free=0)
    expect("reset_peak", allocated_bytes__all__peak=3 * MiB)
    expect("del_large", allocated_bytes__all__current=0, reserved_bytes__all__current=22 * MiB,
           active_bytes__all__current=0, allocated_bytes__all__peak=3 * MiB)
    expect("empty_cache", reserved_bytes__all__current=0, segment__all__current=0,
           num_device_free=2, num_device_alloc=2)


def test_training_loop_makes_no_driver_allocations_after_warm_up():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).to("openreg")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs = torch.randn(256, 64, device="openreg")
    targets = torch.randint(0, 10, (256,), device="openreg")

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(3):
        step()
    before = torch.openreg.memory_stats()
    allocated_before = torch.openreg.memory_allocated()
    for _ in range(20):
        step()
    after = torch.openreg.memory_stats()
    assert after["num_device_alloc"] == before["num_device_alloc"]
    assert after["num_device_free"] == before["num_device_free"]
    assert after["allocation.all.allocated"] > before["allocation.all.allocated"]  # it did allocate
    torch.openreg.synchronize()
    assert torch.openreg.memory_allocated() == allocated_before


def test_memory_recorded_on_another_stream_is_not_reused_early():
    # On threaded_sim with adversarial delays the side stream lags; if the
    # freed block were handed out at once, the fill would overwrite `x`
    # before the side stream reads it.
    result = run_python(
        """
        import torch
        main = torch.accelerator.current_stream()
        side = torch.Stream(device="openreg")
        wrong = 0
        for trial in range(20):
            x = torch.full((1 << 18,), float(trial), device="openreg")
            side.wait_stream(main)
            torch.accelerator.set_stream(side)
            y = x * 2
            torch.accelerator.set_stream(main)
            x.record_stream(side)
            del x
            z = torch.full((1 << 18,), -1.0, device="openreg")
            main.wait_stream(side)
            wrong += int((y != 2.0 * trial).sum().item())
        print("wrong:", wrong)
        print("active after sync:", torch.openreg.memory_stats()["active.all.current"])
        """,
        env={"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=7"}
        if torch.openreg.driver_info().name == "threaded_sim" else {},
    )
    assert result.returncode == 0, result.stderr
    assert "wrong: 0" in result.stdout


def test_out_of_memory_releases_the_cache_first_and_statistics_stay_right():
    result = run_python(
        """
        import torch
        o = torch.openreg
        cached = torch.empty(40 * 2**20, dtype=torch.uint8, device="openreg")
        del cached  # 40 MiB cached, not allocated
        fits = torch.empty(50 * 2**20, dtype=torch.uint8, device="openreg")
        print("retries:", o.memory_stats()["num_alloc_retries"])
        try:
            torch.empty(100 * 2**20, dtype=torch.uint8, device="openreg")
        except torch.OutOfMemoryError as error:
            print("error:", error)
        stats = o.memory_stats()
        print("ooms:", stats["num_ooms"])
        print("allocated:", stats["allocated_bytes.all.current"])
        del fits
        again = torch.ones(60 * 2**20, dtype=torch.uint8, device="openreg")
        print("after:", int(again[:1000].sum().item()))
        """,
        env={"OPENREG_DEVICE_MEMORY": "64MiB"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "retries: 1" in out
    assert "error: openreg out of memory on device openreg:0: tried to allocate 100.00 MiB" in out
    assert "capacity of 64.00 MiB" in out
    assert f"{50 * MiB} bytes) allocated" in out
    assert "OPENREG_DEVICE_MEMORY" in out and "max_split_size_mb" in out
    assert "ooms: 1" in out
    assert f"allocated: {50 * MiB}" in out
    assert "after: 1000" in out


def test_alloc_conf_is_applied_and_validated():
    result = run_python(
        """
        import torch
        torch.empty(1, device="openreg")
        print("split:", torch.openreg.memory_stats()["max_split_size"])
        """,
        env={"OPENREG_ALLOC_CONF": "max_split_size_mb:64"},
    )
    assert result.returncode == 0, result.stderr
    assert f"split: {64 * MiB}" in result.stdout

    result = run_python(
        """
        import torch
        try:
            torch.empty(1, device="openreg")
        except Exception as error:
            print(type(error).__name__, error)
        print("alive")
        """,
        env={"OPENREG_ALLOC_CONF": "max_split_size_mb:4"},
    )
    assert result.returncode == 0, result.stderr
    assert "OPENREG_ALLOC_CONF='max_split_size_mb:4' is not valid" in result.stdout
    assert "max_split_size_mb must be an integer number of MiB from 21" in result.stdout
    assert "alive" in result.stdout


def test_many_threads_and_streams_end_with_nothing_allocated():
    torch.openreg.synchronize()
    base = torch.openreg.memory_allocated()
    errors = []

    def worker(seed):
        try:
            generator = torch.Generator().manual_seed(seed)
            stream = torch.Stream(device="openreg")
            torch.accelerator.set_stream(stream)
            live = []
            for _ in range(100):
                size = int(torch.randint(1, 1 << 16, (1,), generator=generator))
                live.append(torch.ones(size, device="openreg") * seed)
                if len(live) > 5:
                    victim = live.pop(0)
                    assert float(victim[0].item()) == float(seed)
            live.clear()
            stream.synchronize()
        except Exception as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    torch.openreg.synchronize()
    assert torch.openreg.memory_allocated() == base


def test_accelerator_reports_the_same_numbers():
    keep = torch.empty(5000, device="openreg")
    torch.openreg.synchronize()
    accelerator = torch.accelerator
    assert accelerator.memory_stats(0) == torch.openreg.memory_stats(0)
    assert accelerator.memory_allocated(0) == torch.openreg.memory_allocated(0)
    assert accelerator.memory_reserved(0) == torch.openreg.memory_reserved()
    assert accelerator.max_memory_allocated(0) == torch.openreg.max_memory_allocated()
    assert accelerator.max_memory_reserved(0) == torch.openreg.max_memory_reserved()
    assert accelerator.get_memory_info(0) == torch.openreg.mem_get_info(0)
    accelerator.reset_peak_memory_stats(0)
    assert torch.openreg.max_memory_allocated() == torch.openreg.memory_allocated()
    spare = torch.empty(3 * MiB, dtype=torch.uint8, device="openreg")
    del spare
    reserved = torch.openreg.memory_reserved()
    accelerator.empty_cache()
    assert torch.openreg.memory_reserved() < reserved
    assert torch.openreg.memory_allocated() >= keep.numel() * 4
    assert torch.openreg.max_memory_reserved() >= torch.openreg.memory_reserved()
    free, total = torch.openreg.mem_get_info()
    assert total == torch.openreg.get_device_properties().total_memory
    assert free <= total - torch.openreg.memory_reserved()
    summary = torch.openreg.memory_summary()
    for row in ("Allocated memory", "Reserved memory", "from small pool", "num_device_alloc"):
        assert row in summary
    nested = torch.openreg.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == torch.openreg.memory_allocated()
    torch.openreg.reset_accumulated_memory_stats()
    assert torch.openreg.memory_stats()["num_device_alloc"] == 0


def test_pinned_memory_is_cached():
    torch.openreg.empty_host_cache()
    torch.openreg.reset_accumulated_host_memory_stats()
    first = torch.empty(1000).pin_memory()
    address = first.data_ptr()
    assert first.is_pinned()
    del first
    second = torch.empty(900).pin_memory()  # same 4 KiB block
    assert second.data_ptr() == address
    stats = torch.openreg.host_memory_stats()
    assert stats["num_host_alloc"] == 1
    assert stats["active_requests.current"] == 1
    assert torch.openreg.host_memory_stats_as_nested_dict()["active_requests"]["current"] == 1
    del second
    torch.openreg.empty_host_cache()
    stats = torch.openreg.host_memory_stats()
    assert stats["num_host_free"] == 1
    assert stats["allocated_bytes.current"] == 0


@pytest.mark.skipif(torch.openreg.driver_info().name != "threaded_sim",
                    reason="only an asynchronous driver has work queued when an allocation is made")
def test_allocation_waits_for_queued_work_that_holds_memory():
    # Memory freed while queued work still reads it serves only its stream's
    # later allocations; adversarial delays keep that work queued when an
    # allocation needs the memory, which then succeeds only by waiting for the
    # device (counted in num_sync_all_streams) instead of failing.
    result = run_python(
        """
        import torch
        x = torch.ones(30 * 2**20, dtype=torch.uint8, device="openreg")
        y = x * 2
        del x, y  # both blocks wait for the stream to run the queued work
        z = torch.zeros(50 * 2**20, dtype=torch.uint8, device="openreg")
        print("sum:", int(z[:10].sum().item()))
        print("waits:", torch.openreg.memory_stats()["num_sync_all_streams"])
        """,
        env={"OPENREG_DEVICE_MEMORY": "64MiB",
             "OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=5,adversarial_max_delay_us=500000"},
    )
    assert result.returncode == 0, result.stderr
    assert "sum: 0" in result.stdout
    assert "waits: 1" in result.stdout


def test_zero_byte_allocations_take_no_memory():
    # As CUDA's caching allocator: an empty tensor holds a null pointer and no block, and nothing is counted.
    source = torch.arange(4.0, device="openreg")
    torch.openreg.synchronize()
    before = torch.openreg.memory_stats()
    empties = [torch.empty(0, device="openreg"), torch.ones(0, 3, device="openreg"), source[:0].clone()]
    after = torch.openreg.memory_stats()
    assert [t.untyped_storage().data_ptr() for t in empties] == [0, 0, 0]
    for key in ("allocation.all.allocated", "allocation.all.current", "allocated_bytes.all.current"):
        assert after[key] == before[key], key

    # Empty tensors work as before: copied both ways, used on another stream, grown into real memory.
    assert empties[1].cpu().shape == (0, 3)
    assert torch.zeros(0).to("openreg").untyped_storage().data_ptr() == 0
    side = torch.openreg.Stream()
    with torch.openreg.stream(side):
        doubled = empties[1] * 2
    empties[1].record_stream(side)
    side.synchronize()
    assert doubled.shape == (0, 3)
    grown = empties[0].resize_(8).fill_(2.0)
    assert grown.untyped_storage().data_ptr() != 0
    assert grown.cpu().tolist() == [2.0] * 8
    assert torch.openreg.memory_stats()["allocation.all.current"] == before["allocation.all.current"] + 1


def _empty_inside_kernel(x):
    scratch = torch.empty(0)  # made inside the kernel, as oneDNN's convolution makes five a call
    del scratch
    return x * 2, torch.empty(0, 5)


def _blocks_allocated_by(op, x):
    op(x)  # the first call learns the results' shapes
    torch.openreg.synchronize()
    before = torch.openreg.memory_stats()["allocation.all.allocated"]
    results = op(x)
    torch.openreg.synchronize()
    return torch.openreg.memory_stats()["allocation.all.allocated"] - before, results


def test_empty_tensors_a_kernel_makes_take_no_memory():
    library = torch.library.Library("openreg_zero_byte_test", "DEF")
    try:
        library.define("doubled(Tensor x) -> Tensor")
        library.impl("doubled", lambda x: x * 2, "CPU")
        library.impl("doubled", torch.empty_like, "Meta")
        library.define("empty_inside(Tensor x) -> (Tensor, Tensor)")
        library.impl("empty_inside", _empty_inside_kernel, "CPU")
        library.impl("empty_inside", lambda x: (torch.empty_like(x), x.new_empty(0, 5)), "Meta")
        x = torch.arange(8.0, device="openreg")
        alone, _ = _blocks_allocated_by(torch.ops.openreg_zero_byte_test.doubled.default, x)
        with_empties, (doubled, empty) = _blocks_allocated_by(torch.ops.openreg_zero_byte_test.empty_inside.default, x)
        # Neither the kernel's empty scratch nor the empty result takes a block.
        assert with_empties == alone
        assert alone >= 1
        assert doubled.device.type == empty.device.type == "openreg"
        assert empty.shape == (0, 5) and empty.untyped_storage().data_ptr() == 0
        assert doubled.cpu().tolist() == [2.0 * i for i in range(8)]
    finally:
        library._destroy()
