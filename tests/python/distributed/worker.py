"""One rank of a distributed test: worker.py SCENARIO, rendezvous from the environment (launcher.py).

Prints `CHECK {"name", "ok", "detail"}` per check. A check compares openreg results with a CPU reference
computed in the same process from every rank's (deterministic) inputs.
"""

import json
import os
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])


def report(name: str, ok: bool, detail: str = "") -> None:
    print("CHECK " + json.dumps({"name": name, "ok": bool(ok), "detail": detail}), flush=True)


def check(name: str, function) -> None:
    try:
        function()
        report(name, True)
    except Exception:  # noqa: BLE001 - every failure is reported to the test
        report(name, False, traceback.format_exc())


def expect_error(name: str, function, *fragments: str, error=Exception) -> None:
    """`function` raises `error` whose message contains every fragment."""
    try:
        function()
    except error as raised:
        missing = [f for f in fragments if f not in str(raised)]
        report(name, not missing, f"missing {missing} in: {raised}" if missing else str(raised))
        return
    except Exception as raised:  # noqa: BLE001
        report(name, False, f"expected {error.__name__}, got {type(raised).__name__}: {raised}")
        return
    report(name, False, "no error raised")


def device() -> torch.device:
    return torch.device("openreg", RANK % torch.openreg.device_count())


def init(timeout_s: float = 60, backend=None) -> torch.device:
    dev = device()
    torch.openreg.set_device(dev)
    dist.init_process_group(backend=backend, init_method="env://", rank=RANK, world_size=WORLD,
                            timeout=timedelta(seconds=timeout_s), device_id=dev)
    return dev


def value(rank: int, n: int = 6, dtype=torch.float32, offset: float = 0) -> torch.Tensor:
    """Rank `rank`'s input: distinct per rank and element, exact in every dtype used."""
    return (torch.arange(n, dtype=torch.float64) + 1 + 3 * rank + offset).to(dtype)


def same(openreg_tensor: torch.Tensor, reference: torch.Tensor) -> None:
    assert openreg_tensor.device.type == "openreg", openreg_tensor.device
    torch.testing.assert_close(openreg_tensor.cpu(), reference, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- collectives vs the CPU

def scenario_collectives() -> None:
    dev = init()
    all_values = [value(r) for r in range(WORLD)]
    stacked = torch.stack(all_values)

    reductions = {
        "SUM": stacked.sum(0), "PRODUCT": stacked.prod(0), "MIN": stacked.min(0).values,
        "MAX": stacked.max(0).values, "AVG": stacked.mean(0),
    }
    for op_name, reference in reductions.items():
        def run(op_name=op_name, reference=reference):
            t = value(RANK).to(dev)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op_name))
            same(t, reference)
        check(f"all_reduce_{op_name}", run)

    ints = torch.stack([value(r, dtype=torch.int64) for r in range(WORLD)])
    bitwise = {"BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor}
    for op_name, fn in bitwise.items():
        def run(op_name=op_name, fn=fn):
            t = value(RANK, dtype=torch.int64).to(dev)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op_name))
            reference = ints[0]
            for row in ints[1:]:
                reference = fn(reference, row)
            same(t, reference)
        check(f"all_reduce_{op_name}", run)

    def premul_sum():
        t = value(RANK).to(dev)
        dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.25))
        same(t, stacked.sum(0) * 0.25)
    check("all_reduce_PREMUL_SUM", premul_sum)

    def broadcast():
        t = value(RANK).to(dev)
        dist.broadcast(t, src=WORLD - 1)
        same(t, all_values[-1])
    check("broadcast", broadcast)

    for op_name in ("SUM", "AVG"):
        def reduce(op_name=op_name):
            t = value(RANK).to(dev)
            dist.reduce(t, dst=0, op=getattr(dist.ReduceOp, op_name))
            if RANK == 0:
                same(t, reductions[op_name])
        check(f"reduce_{op_name}", reduce)

    def all_gather():
        outputs = [torch.empty(6, device=dev) for _ in range(WORLD)]
        dist.all_gather(outputs, value(RANK).to(dev))
        for output, reference in zip(outputs, all_values):
            same(output, reference)
    check("all_gather", all_gather)

    def all_gather_into_tensor():
        output = torch.empty(6 * WORLD, device=dev)
        dist.all_gather_into_tensor(output, value(RANK).to(dev))
        same(output, torch.cat(all_values))
    check("all_gather_into_tensor", all_gather_into_tensor)

    def all_gather_coalesced():
        outputs = [[torch.empty(6, device=dev), torch.empty(2, device=dev)] for _ in range(WORLD)]
        dist.all_gather_coalesced(outputs, [value(RANK).to(dev), value(RANK, 2).to(dev)])
        for r in range(WORLD):
            same(outputs[r][0], all_values[r])
            same(outputs[r][1], value(r, 2))
    check("all_gather_coalesced", all_gather_coalesced)

    def chunk_input(r):  # rank r's contribution to rank j's output is chunk j
        return [value(r, offset=10 * j) for j in range(WORLD)]

    def reduce_scatter():
        output = torch.empty(6, device=dev)
        dist.reduce_scatter(output, [c.to(dev) for c in chunk_input(RANK)])
        same(output, sum(chunk_input(r)[RANK] for r in range(WORLD)))
    check("reduce_scatter", reduce_scatter)

    for op_name in ("SUM", "AVG"):
        def reduce_scatter_tensor(op_name=op_name):
            output = torch.empty(6, device=dev)
            dist.reduce_scatter_tensor(output, torch.cat(chunk_input(RANK)).to(dev), op=getattr(dist.ReduceOp, op_name))
            reference = sum(chunk_input(r)[RANK] for r in range(WORLD))
            same(output, reference / WORLD if op_name == "AVG" else reference)
        check(f"reduce_scatter_tensor_{op_name}", reduce_scatter_tensor)

    def all_to_all():
        outputs = [torch.empty(6, device=dev) for _ in range(WORLD)]
        dist.all_to_all(outputs, [c.to(dev) for c in chunk_input(RANK)])
        for r in range(WORLD):
            same(outputs[r], chunk_input(r)[RANK])
    check("all_to_all", all_to_all)

    def all_to_all_single_even():
        output = torch.empty(6 * WORLD, device=dev)
        dist.all_to_all_single(output, torch.cat(chunk_input(RANK)).to(dev))
        same(output, torch.cat([chunk_input(r)[RANK] for r in range(WORLD)]))
    check("all_to_all_single_even", all_to_all_single_even)

    def sends(r):  # uneven: rank r sends 1 + r + j elements to rank j
        return [value(r, 1 + r + j, offset=100 * j) for j in range(WORLD)]

    def all_to_all_single_uneven():
        received = [sends(r)[RANK] for r in range(WORLD)]
        output = torch.empty(sum(len(t) for t in received), device=dev)
        dist.all_to_all_single(output, torch.cat(sends(RANK)).to(dev),
                               output_split_sizes=[len(t) for t in received],
                               input_split_sizes=[len(t) for t in sends(RANK)])
        same(output, torch.cat(received))
    check("all_to_all_single_uneven", all_to_all_single_uneven)

    def gather():
        outputs = [torch.empty(6, device=dev) for _ in range(WORLD)] if RANK == 0 else None
        dist.gather(value(RANK).to(dev), outputs, dst=0)
        if RANK == 0:
            for output, reference in zip(outputs, all_values):
                same(output, reference)
    check("gather", gather)

    def scatter():
        output = torch.empty(6, device=dev)
        dist.scatter(output, [v.to(dev) for v in all_values] if RANK == 0 else None, src=0)
        same(output, all_values[RANK])
    check("scatter", scatter)

    def send_recv():
        if RANK == 0:
            dist.send(value(0).to(dev), dst=1)
            back = torch.empty(6, device=dev)
            dist.recv(back, src=1)
            same(back, value(0) * 2)
        elif RANK == 1:
            t = torch.empty(6, device=dev)
            dist.recv(t, src=0)
            dist.send(t * 2, dst=0)
    check("send_recv", send_recv)

    def isend_irecv():
        peer = (RANK + 1) % WORLD
        source = (RANK - 1) % WORLD
        received = torch.empty(6, device=dev)
        if RANK % 2 == 0:
            works = [dist.isend(value(RANK).to(dev), dst=peer), dist.irecv(received, src=source)]
        else:
            works = [dist.irecv(received, src=source), dist.isend(value(RANK).to(dev), dst=peer)]
        for work in works:
            work.wait()
        same(received, value(source))
    check("isend_irecv", isend_irecv)

    def batch_isend_irecv():
        peer, source = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        received = torch.empty(6, device=dev)
        ops = [dist.P2POp(dist.isend, value(RANK).to(dev), peer), dist.P2POp(dist.irecv, received, source)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        same(received, value(source))
    check("batch_isend_irecv", batch_isend_irecv)

    def recv_from_any_source():
        if RANK == 1:
            dist.send(value(1).to(dev), dst=0)
        elif RANK == 0:
            t = torch.empty(6, device=dev)
            sender = dist.recv(t)  # no src: Gloo's receive from any rank
            assert sender == 1, sender
            same(t, value(1))
    check("recv_any_source", recv_from_any_source)

    def all_reduce_coalesced():
        a, b = value(RANK).to(dev), value(RANK, 3).to(dev)
        dist.all_reduce_coalesced([a, b])
        same(a, stacked.sum(0))
        same(b, torch.stack([value(r, 3) for r in range(WORLD)]).sum(0))
    check("all_reduce_coalesced", all_reduce_coalesced)

    def barrier():
        dist.barrier()
    check("barrier", barrier)

    def async_work():
        t = value(RANK).to(dev)
        work = dist.all_reduce(t, async_op=True)
        future = work.get_future()
        work.wait()
        u = t + 1  # queued after the wait: sees the sum
        torch.openreg.synchronize()
        assert work.is_completed()
        same(u, stacked.sum(0) + 1)
        same(future.wait()[0], stacked.sum(0))
        chained = future.then(lambda f: f.value()[0] * 2)
        same(chained.wait(), stacked.sum(0) * 2)
    check("async_work", async_work)

    def zero_copy():
        t = value(RANK, 1 << 18).to(dev)  # 1 MiB
        torch.openreg.synchronize()
        pointer = t.data_ptr()
        torch.openreg.reset_peak_memory_stats()
        before = torch.openreg.memory_allocated()
        dist.all_reduce(t)
        torch.openreg.synchronize()
        assert t.data_ptr() == pointer
        peak = torch.openreg.max_memory_allocated()
        assert peak == before, f"the all_reduce allocated device memory: peak {peak}, before {before}"
        same(t, torch.stack([value(r, 1 << 18) for r in range(WORLD)]).sum(0))
    check("zero_copy", zero_copy)

    def object_collectives():
        gathered = [None] * WORLD
        dist.all_gather_object(gathered, {"rank": RANK})
        assert gathered == [{"rank": r} for r in range(WORLD)], gathered
    check("all_gather_object", object_collectives)

    dist.destroy_process_group()


# --------------------------------------------------------------------------- stream ordering

def scenario_ordering() -> None:
    """Run under threaded_sim's adversarial delays: missing stream ordering shows up as wrong values."""
    dev = init()
    n = 1 << 12
    stacked = torch.stack([value(r, n) for r in range(WORLD)])

    def queued_before_and_after():
        for _ in range(5):
            x = value(RANK, n).to(dev)
            y = x * 2  # queued before the collective: Gloo must see it done
            dist.all_reduce(y)
            z = y + 1  # queued after: must see the sum
            same(z, stacked.sum(0) * 2 + 1)
    check("ordering_current_stream", queued_before_and_after)

    def side_stream_wait():
        side = torch.openreg.Stream()
        x = value(RANK, n).to(dev)
        side.wait_stream(torch.openreg.current_stream())
        with torch.openreg.stream(side):
            work = dist.all_reduce(x, async_op=True)
        work.wait()  # the current stream now waits for the side stream's collective
        same(x * 3, stacked.sum(0) * 3)
    check("ordering_async_side_stream", side_stream_wait)

    def two_streams_issue_order():
        # Issued on two streams with delays that may run the second first: the ranks must still pair
        # them in issue order (a different size makes a mispairing fail).
        first, second = torch.openreg.Stream(), torch.openreg.Stream()
        a, b = value(RANK, n).to(dev), value(RANK, 7).to(dev)
        first.wait_stream(torch.openreg.current_stream())
        second.wait_stream(torch.openreg.current_stream())
        for _ in range(3):
            with torch.openreg.stream(first):
                dist.all_reduce(a)
            with torch.openreg.stream(second):
                dist.all_reduce(b)
        torch.openreg.synchronize()
        same(a, stacked.sum(0) * WORLD ** 2)
        same(b, torch.stack([value(r, 7) for r in range(WORLD)]).sum(0) * WORLD ** 2)
    check("ordering_two_streams", two_streams_issue_order)

    def caller_not_blocked():
        # The collective is enqueued behind slow work: returning before it runs shows the caller is not blocked.
        big = torch.randn(512, 512, device=dev)
        for _ in range(10):
            big = big @ big / 512
        x = value(RANK, n).to(dev)
        work = dist.all_reduce(x, async_op=True)
        returned_before_done = not work.is_completed()
        torch.openreg.synchronize()
        assert work.is_completed()
        same(x, stacked.sum(0))
        # cpu_sim runs work inline, so only an asynchronous driver can show it.
        if os.environ.get("OPENREG_DRIVER") == "threaded_sim":
            assert returned_before_done, "all_reduce(async_op=True) returned after its work had run"
    check("ordering_caller_not_blocked", caller_not_blocked)

    def captured_collectives():
        # Collectives captured on two streams take their places in the process group's order at every replay;
        # eager collectives of another size in between must still pair across ranks (a mispairing fails).
        x = torch.zeros(n, device=dev)
        side = torch.openreg.Stream()
        graph = torch.openreg.Graph()
        with torch.openreg.graph(graph):
            y = x * 2
            dist.all_reduce(y)
            side.wait_stream(torch.openreg.current_stream())
            with torch.openreg.stream(side):
                w = y + 1
                dist.all_reduce(w)
            torch.openreg.current_stream().wait_stream(side)
            z = w * 1
        for replay in range(3):
            x.copy_(value(RANK, n, offset=replay))
            graph.replay()
            between = value(RANK, 7).to(dev)
            dist.all_reduce(between)
            summed = torch.stack([value(r, n, offset=replay) for r in range(WORLD)]).sum(0) * 2
            same(z, (summed + 1) * WORLD)
            same(between, torch.stack([value(r, 7) for r in range(WORLD)]).sum(0))
    check("ordering_captured_collectives", captured_collectives)

    def dropped_tensors_memory():
        # Collectives own no reference to memory stream-ordered on their stream (Note [Collectives borrow
        # stream-ordered memory]), so tensors dropped while their collective is queued are reused at once by
        # the next iteration's tensors, whose fills run after the collective: wrong ordering shows up as wrong
        # sums. Gloo's cross-process calls keep the stream far behind the host here; when every collective
        # owned its tensors until it ran, every iteration's 256 KiB stayed allocated (10 MiB).
        m, rounds = 1 << 14, 40
        total = torch.zeros(WORLD * m, device=dev)
        torch.openreg.synchronize()
        torch.openreg.reset_peak_memory_stats()
        base = torch.openreg.memory_allocated()
        for i in range(rounds):
            x = torch.full((m,), float(1000 * RANK + i), device=dev)
            gathered = torch.empty(WORLD * m, device=dev)
            dist.all_gather_into_tensor(gathered, x)
            summed = torch.full((m,), float(i), device=dev)
            dist.all_reduce(summed, op=dist.ReduceOp.AVG)
            total += gathered
            total[:m] += summed
            del x, gathered, summed
        torch.openreg.synchronize()
        peak = torch.openreg.max_memory_allocated() - base
        per_round = 4 * m * (2 + WORLD)  # x, summed and gathered, in bytes
        expected = torch.cat([torch.full((m,), float(1000 * r * rounds + rounds * (rounds - 1) // 2))
                              for r in range(WORLD)])
        expected[:m] += rounds * (rounds - 1) // 2
        same(total, expected)
        assert peak <= 2 * per_round, f"peak {peak} bytes for rounds of {per_round} bytes"
    check("ordering_dropped_tensors_memory", dropped_tensors_memory)

    def side_stream_owns_dropped_tensors():
        # A collective on a side stream must own memory ordered on the current stream: dropped there, it
        # would serve the next fill on the current stream, which may run before the collective reads it.
        m = 1 << 14
        side = torch.openreg.Stream()
        gathered = []
        for i in range(20):
            x = torch.full((m,), float(1000 * RANK + i), device=dev)
            gathered.append(torch.empty(WORLD * m, device=dev))
            side.wait_stream(torch.openreg.current_stream())
            with torch.openreg.stream(side):
                dist.all_gather_into_tensor(gathered[-1], x)
            del x
            torch.full((m,), -1.0, device=dev)
        torch.openreg.synchronize()
        for i, result in enumerate(gathered):
            same(result, torch.cat([torch.full((m,), float(1000 * r + i)) for r in range(WORLD)]))
    check("ordering_side_stream_owns_dropped_tensors", side_stream_owns_dropped_tensors)

    def resized_after_the_call():
        # A collective uses the memory its tensor had when it was called, as a CUDA kernel does: growing the
        # tensor afterwards queues the copy of the old memory after the collective, so the reduced values move.
        # A collective that looked the memory up when it ran would reduce the new, unfilled memory instead.
        m = 1 << 12
        for i in range(10):
            x = torch.full((m,), float(RANK + i), device=dev)
            dist.all_reduce(x)
            x.resize_(2 * m)
            same(x[:m], torch.full((m,), float(sum(r + i for r in range(WORLD)))))
    check("ordering_resized_after_the_call", resized_after_the_call)

    dist.destroy_process_group()


# --------------------------------------------------------------------------- failures

def scenario_bad_input() -> None:
    dev = init()
    other = torch.device("openreg", (dev.index + 1) % torch.openreg.device_count())
    backend = dist.group.WORLD._get_backend(dev)

    expect_error("cpu_tensor", lambda: backend.allreduce([torch.ones(2)]).wait(),
                 "expected tensors on an openreg device", "found a tensor on cpu", "cpu:gloo,openreg:openreg")
    expect_error("cpu_input_openreg_output",
                 lambda: dist.all_gather_into_tensor(torch.empty(2 * WORLD, device=dev), torch.ones(2)),
                 "found a tensor on cpu")
    if torch.openreg.device_count() > 1:
        expect_error("other_device", lambda: dist.all_reduce(torch.ones(2, device=other)),
                     f"expected every tensor on openreg:{dev.index}", f"found one on {other}")
    expect_error("all_gather_list_length",
                 lambda: dist.all_gather([torch.empty(2, device=dev)] * (WORLD + 1), torch.ones(2, device=dev)),
                 f"expected {WORLD} output tensors (one per rank)", f"found {WORLD + 1}")
    expect_error("all_gather_into_tensor_size",
                 lambda: dist.all_gather_into_tensor(torch.empty(3, device=dev), torch.ones(2, device=dev)),
                 f"{2 * WORLD} elements", "found 3 elements")
    expect_error("avg_of_integers",
                 lambda: dist.all_reduce(torch.ones(2, dtype=torch.int64, device=dev), op=dist.ReduceOp.AVG),
                 "ReduceOp.AVG", "floating-point")
    expect_error("non_contiguous", lambda: dist.all_reduce(torch.ones(4, 4, device=dev).t()),
                 "contiguous", "tensor.contiguous()")
    expect_error("uneven_splits",
                 lambda: dist.all_to_all_single(torch.empty(4, device=dev), torch.ones(4, device=dev),
                                                input_split_sizes=[1, 1]),
                 "split sizes summing to dim 0")

    def still_works():
        t = value(RANK).to(dev)
        dist.all_reduce(t)
        same(t, torch.stack([value(r) for r in range(WORLD)]).sum(0))
    check("works_after_bad_input", still_works)

    def mismatched_sizes_across_ranks():
        # Each rank's tensor is valid on its own; only the peers can tell: Gloo reports it.
        t = torch.ones(4 + 4 * RANK, device=dev)
        dist.all_reduce(t)
        t.cpu()
    expect_error("sizes_differ_across_ranks", mismatched_sizes_across_ranks, "all_reduce", "disagree",
                 "rank 0: ALLREDUCE of 4 Float elements", "rank 1: ALLREDUCE of 8 Float elements",
                 error=RuntimeError)

    def mismatched_dtypes_across_ranks():
        t = torch.ones(4, device=dev, dtype=torch.float32 if RANK == 0 else torch.float64)
        dist.all_reduce(t)
        t.cpu()
    expect_error("dtypes_differ_across_ranks", mismatched_dtypes_across_ranks, "disagree",
                 "rank 0: ALLREDUCE of 4 Float elements", "rank 1: ALLREDUCE of 4 Double elements",
                 error=RuntimeError)
    check("device_usable_after_mismatch", lambda: same(torch.ones(3, device=dev) * 2, torch.full((3,), 2.0)))
    dist.destroy_process_group()


def scenario_timeout() -> None:
    """Rank 1 never calls the collective; rank 0 must get an error naming it within the group's timeout."""
    dev = init(timeout_s=3)
    store = dist.distributed_c10d._get_default_store()
    if RANK == 0:
        def run():
            start = time.monotonic()
            t = torch.ones(8, device=dev)
            try:
                dist.all_reduce(t)
                t.cpu()  # the failure surfaces here on an asynchronous driver
            finally:
                report("timeout_elapsed", True, f"{time.monotonic() - start:.1f}")
        expect_error("timeout", run, "all_reduce", "rank 0", "ranks [0, 1]", "timeout of 3000 ms",
                     error=RuntimeError)
        check("device_usable_after_timeout", lambda: same(torch.ones(3, device=dev) + 1, torch.full((3,), 2.0)))
        store.set("rank0_done", "1")
    else:
        store.wait(["rank0_done"], timedelta(seconds=60))
    os._exit(0)  # the group is broken by design; skip its teardown


def scenario_dead_peer() -> None:
    """Rank 1 dies after joining; rank 0's collective must fail, not hang."""
    dev = init(timeout_s=5)
    t = torch.ones(8, device=dev)
    dist.all_reduce(t)  # both ranks connected
    torch.openreg.synchronize()
    if RANK == 1:
        os._exit(0)
    time.sleep(0.5)
    def run():
        dist.all_reduce(t)
        t.cpu()
    expect_error("dead_peer", run, "all_reduce", "ranks [0, 1]", "timeout of 5000 ms", error=RuntimeError)
    check("device_usable_after_dead_peer", lambda: same(torch.ones(3, device=dev) * 3, torch.full((3,), 3.0)))
    os._exit(0)


# --------------------------------------------------------------------------- training

def example_training():
    """examples/train.py, whose model, data and optimizer the DDP checks train."""
    sys.path.insert(0, os.environ["OPENREG_EXAMPLES"])
    import train
    return train


DDP_BATCH, DDP_STEPS = 64, 4


def train_single_process(micro_batches: int = 1):
    """The reference: single process, full batch, on the CPU."""
    train = example_training()
    features, labels = train.make_dataset(num_samples=512)
    model = train.build_model()
    optimizer = train.make_optimizer(model)
    for step in range(DDP_STEPS):
        optimizer.zero_grad()
        for micro in range(micro_batches):
            rows = slice((step * micro_batches + micro) * DDP_BATCH, (step * micro_batches + micro + 1) * DDP_BATCH)
            torch.nn.functional.cross_entropy(model(features[rows]), labels[rows]).backward()
        optimizer.step()
    return model


def train_ddp(dev: torch.device, micro_batches: int = 1, hook=None):
    """Each rank trains on its share of every full batch, in several buckets."""
    from torch.nn.parallel import DistributedDataParallel

    train = example_training()
    features, labels = train.make_dataset(num_samples=512)
    share = DDP_BATCH // WORLD
    model = DistributedDataParallel(train.build_model().to(dev), bucket_cap_mb=0.01)
    if hook is not None:
        model.register_comm_hook(None, hook)
    optimizer = train.make_optimizer(model)
    x, y = features.to(dev), labels.to(dev)
    for step in range(DDP_STEPS):
        optimizer.zero_grad()
        for micro in range(micro_batches):
            start = (step * micro_batches + micro) * DDP_BATCH + RANK * share
            rows = slice(start, start + share)
            if micro == micro_batches - 1:
                torch.nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()
            else:
                with model.no_sync():
                    torch.nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()
        optimizer.step()
    return model.module


def assert_same_parameters(model, reference) -> None:
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5, msg=name)


def scenario_ddp() -> None:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    dev = init(backend="cpu:gloo,openreg:openreg")

    def mixed_backends():
        assert dist.group.WORLD._get_backend(dev).name() == "openreg"
        cpu, device_tensor = value(RANK), value(RANK).to(dev)
        dist.all_reduce(cpu)  # through Gloo directly
        dist.all_reduce(device_tensor)  # through openreg's backend
        reference = torch.stack([value(r) for r in range(WORLD)]).sum(0)
        torch.testing.assert_close(cpu, reference)
        same(device_tensor, reference)
    check("backend_string_cpu_gloo_openreg", mixed_backends)

    check("ddp_equals_full_batch", lambda: assert_same_parameters(train_ddp(dev), train_single_process()))
    check("ddp_no_sync_equals_full_batch",
          lambda: assert_same_parameters(train_ddp(dev, micro_batches=2), train_single_process(2)))
    check("ddp_comm_hook_equals_full_batch",
          lambda: assert_same_parameters(train_ddp(dev, hook=default_hooks.allreduce_hook), train_single_process()))
    dist.destroy_process_group()


def scenario_no_arguments() -> None:
    """`dist.init_process_group()` as device-generic scripts call it: no backend, no device, rendezvous from the
    environment torchrun sets. PyTorch then registers openreg's backend alone (the accelerator's) but, in torch
    2.13, names Gloo the group's default backend; DDP asks for that default."""
    dev = device()
    torch.openreg.set_device(dev)
    dist.init_process_group()

    def backends():
        group = dist.group.WORLD
        assert group._device_types == [torch.device("openreg")], group._device_types
        assert group._get_backend(dev).name() == "openreg"
        assert group.name() == "custom", group.name()
        tensor = value(RANK).to(dev)
        dist.all_reduce(tensor)
        same(tensor, torch.stack([value(r) for r in range(WORLD)]).sum(0))
    check("no_arguments_backend", backends)
    check("no_arguments_ddp_equals_full_batch",
          lambda: assert_same_parameters(train_ddp(dev), train_single_process()))
    dist.destroy_process_group()


def scenario_fsdp() -> None:
    sys.path.insert(0, os.environ["OPENREG_EXAMPLES"])
    import train
    from torch.distributed.fsdp import fully_shard

    dev = init(backend="openreg")

    def backend_by_name():
        assert dist.get_backend() == "openreg", dist.get_backend()
    check("backend_by_name", backend_by_name)
    features, labels = train.make_dataset(num_samples=256)
    batch, share, steps = 64, 64 // WORLD, 3

    reference = train.build_model()
    reference_optimizer = train.make_optimizer(reference)
    model = train.build_model()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    model.to(dev)
    optimizer = train.make_optimizer(model)
    x, y = features.to(dev), labels.to(dev)

    def run():
        for step in range(steps):
            rows = slice(step * batch, (step + 1) * batch)
            reference_optimizer.zero_grad()
            torch.nn.functional.cross_entropy(reference(features[rows]), labels[rows]).backward()
            reference_optimizer.step()
            mine = slice(step * batch + RANK * share, step * batch + (RANK + 1) * share)
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x[mine]), y[mine]).backward()
            optimizer.step()
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            full = p.full_tensor()
            assert full.device.type == "openreg", full.device
            torch.testing.assert_close(full.cpu(), q.detach(), rtol=1e-4, atol=1e-5, msg=name)
    check("fsdp2_equals_full_batch", run)
    dist.destroy_process_group()


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
