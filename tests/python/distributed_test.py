"""torch.distributed on openreg (docs/distributed.md): every collective against a CPU reference, stream ordering
under threaded_sim's adversarial delays, DDP and FSDP2 against single-process full-batch training, torchrun with
two processes and with two nodes on 127.0.0.1, and every failure path.

Each scenario starts its two ranks once (distributed/launcher.py) and the tests read the checks they reported;
every launch is bounded by a timeout, and the failure scenarios use process groups with timeouts of seconds.
"""

import functools
import os
import subprocess
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed"))
import launcher  # noqa: E402

DRIVER = os.environ["OPENREG_DRIVER"]
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
ENV = {"OPENREG_EXAMPLES": os.path.abspath(EXAMPLES)}


@functools.lru_cache(maxsize=None)
def scenario(name: str, **env):
    return launcher.run_ranks(name, env={**ENV, **env})


def assert_check(results, name: str, ranks=(0, 1)) -> None:
    for rank in ranks:
        result = results[rank]
        record = result.checks.get(name)
        assert record is not None, f"rank {rank} did not report {name} (exit code {result.returncode}):\n{result.output[-4000:]}"
        assert record["ok"], f"rank {rank}, {name}:\n{record['detail']}"


def test_default_backend_for_openreg_is_registered():
    import torch.distributed as dist

    assert dist.get_default_backend_for_device("openreg") == "openreg"
    assert dist.Backend("openreg") == "openreg"


COLLECTIVES = [
    *(f"all_reduce_{op}" for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR", "PREMUL_SUM")),
    "broadcast", "reduce_SUM", "reduce_AVG", "all_gather", "all_gather_into_tensor", "all_gather_coalesced",
    "reduce_scatter", "reduce_scatter_tensor_SUM", "reduce_scatter_tensor_AVG", "all_to_all",
    "all_to_all_single_even", "all_to_all_single_uneven", "gather", "scatter", "send_recv", "isend_irecv",
    "batch_isend_irecv", "recv_any_source", "all_reduce_coalesced", "barrier", "async_work", "zero_copy", "all_gather_object",
]


@pytest.mark.parametrize("check", COLLECTIVES)
def test_collective_matches_cpu(check):
    results = scenario("collectives")
    assert all(r.returncode == 0 for r in results), [r.output[-3000:] for r in results]
    assert_check(results, check)


ORDERING = ["ordering_current_stream", "ordering_async_side_stream", "ordering_two_streams",
            "ordering_caller_not_blocked", "ordering_captured_collectives", "ordering_dropped_tensors_memory",
            "ordering_side_stream_owns_dropped_tensors", "ordering_resized_after_the_call"]


@pytest.mark.parametrize("check", ORDERING)
def test_stream_ordering(check):
    # cpu_sim runs everything inline; the adversarial mode is threaded_sim's.
    env = {"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=11"} if DRIVER == "threaded_sim" else {}
    assert_check(scenario("ordering", **env), check)


BAD_INPUT = ["cpu_tensor", "cpu_input_openreg_output", "other_device", "all_gather_list_length",
             "all_gather_into_tensor_size", "avg_of_integers", "non_contiguous", "uneven_splits",
             "works_after_bad_input", "sizes_differ_across_ranks", "dtypes_differ_across_ranks",
             "device_usable_after_mismatch"]


@pytest.mark.parametrize("check", BAD_INPUT)
def test_bad_input_gives_a_clear_error(check):
    if check == "other_device" and torch.openreg.device_count() < 2:
        pytest.skip("needs two devices")
    results = scenario("bad_input")
    assert all(r.returncode == 0 for r in results), [r.output[-3000:] for r in results]
    assert_check(results, check)


def test_timeout_names_collective_ranks_and_timeout():
    results = scenario("timeout")
    assert_check(results, "timeout", ranks=(0,))
    assert_check(results, "device_usable_after_timeout", ranks=(0,))
    # Within the group's 3 s timeout, give or take scheduling: not a hang.
    assert float(results[0].checks["timeout_elapsed"]["detail"]) < 30


def test_dead_peer_is_an_error_not_a_hang():
    results = scenario("dead_peer")
    assert_check(results, "dead_peer", ranks=(0,))
    assert_check(results, "device_usable_after_dead_peer", ranks=(0,))


@pytest.mark.parametrize("check", ["no_arguments_backend", "no_arguments_ddp_equals_full_batch"])
def test_init_process_group_without_arguments_trains_ddp(check):
    assert_check(scenario("no_arguments"), check)


def test_backend_string_with_gloo_for_cpu():
    assert_check(scenario("ddp"), "backend_string_cpu_gloo_openreg")


def test_backend_by_name():
    assert_check(scenario("fsdp"), "backend_by_name")


@pytest.mark.parametrize("check", ["ddp_equals_full_batch", "ddp_no_sync_equals_full_batch",
                                   "ddp_comm_hook_equals_full_batch"])
def test_ddp_equals_single_process_full_batch(check):
    assert_check(scenario("ddp"), check)


def test_fsdp2_equals_single_process_full_batch():
    assert_check(scenario("fsdp"), "fsdp2_equals_full_batch")


def test_torchrun_two_processes_sharing_one_device():
    port = launcher.free_port()
    # One device: both ranks use openreg:0 (local_rank % device_count).
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
         f"--master_port={port}", os.path.join(EXAMPLES, "train_ddp.py"), "--epochs", "2", "--max-steps", "4"],
        env=launcher.loopback_env({"OPENREG_DEVICE_COUNT": "1"}), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "training on 2 ranks (openreg)" in result.stdout
    assert "final test accuracy" in result.stdout


def test_torchrun_two_nodes_on_loopback():
    port = launcher.free_port()
    common = ["--nnodes=2", "--nproc_per_node=1", "--master_addr=127.0.0.1", f"--master_port={port}"]
    nodes = [subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", *common, f"--node_rank={rank}",
         os.path.join(EXAMPLES, "train_ddp.py"), "--epochs", "2", "--max-steps", "4"],
        env=launcher.loopback_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for rank in range(2)]
    outputs = []
    for node in nodes:
        try:
            outputs.append(node.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            node.kill()
            outputs.append(node.communicate()[0] + "\n(killed at the timeout)")
    assert [node.returncode for node in nodes] == [0, 0], "\n".join(outputs)
    assert "training on 2 ranks (openreg)" in outputs[0]
    assert "final test accuracy" in outputs[0]
