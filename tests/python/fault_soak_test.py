"""Trains the example model while the driver fails (docs/fault_injection.md).

Each phase runs the same training as a fault-free reference run, in a fresh
interpreter with OPENREG_DRIVER_OPTIONS asking for faults at a seeded rate.
Every injected fault must reach Python as an exception of the right type
naming the driver call and the status; the failed step is abandoned
(parameters and optimizer state restored from a snapshot), the allocator
statistics are checked back at their values from before the step, and the
step is retried. At the end the model must equal the reference's and every
statistic must be back at its baseline. The counts are what
docs/fault_injection.md reports.
"""

import json
import os

import pytest
import torch

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]

# The training loop of the worker process. {steps} and {out} are filled in.
WORKER = r"""
import importlib.util
import json
import re

import torch

spec = importlib.util.spec_from_file_location("train_example", "examples/train.py")
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

STEPS = {steps}
BATCH = 64
ALLOCATIONS = ("device_malloc", "host_malloc")
FAULT = re.compile(r"(\w+) failed with (\w+): .*\1: injected fault \2 on call \d+ of \1", re.S)

counts = {{}}
mismatches = []


def note(error):
    # Anything but an injected fault is a real failure: let it fail the run.
    match = FAULT.search(str(error))
    if match is None:
        raise error
    point, status = match.groups()
    expected = torch.OutOfMemoryError if point in ALLOCATIONS else RuntimeError
    if not isinstance(error, expected) or (point not in ALLOCATIONS and isinstance(error, torch.OutOfMemoryError)):
        raise AssertionError(f"{{point}} fault raised {{type(error).__name__}}: {{error}}")
    key = f"{{point}}:{{status}}:{{type(error).__name__}}"
    counts[key] = counts.get(key, 0) + 1


def retry(function):
    while True:
        try:
            return function()
        except RuntimeError as error:  # torch.OutOfMemoryError is one
            note(error)


def usage():
    torch.openreg.synchronize()
    host = torch.openreg.host_memory_stats()
    return (torch.openreg.memory_allocated(), host["active_requests.current"])


features, labels = example.make_dataset(num_samples=STEPS * BATCH)
model = example.build_model()
baseline = usage()
retry(lambda: model.to("openreg"))
optimizer = example.make_optimizer(model)
params = list(model.parameters())


def snapshot():
    state = [(p, {{k: v.clone() for k, v in optimizer.state[p].items()}}) for p in params if p in optimizer.state]
    return [p.detach().clone() for p in params], state


def restore(saved):
    saved_params, saved_state = saved
    with torch.no_grad():
        for p, s in zip(params, saved_params):
            p.copy_(s)
    optimizer.zero_grad(set_to_none=True)
    optimizer.state.clear()
    for p, state in saved_state:
        optimizer.state[p] = {{k: v.clone() for k, v in state.items()}}


losses = []
attempts = 0
for step in range(STEPS):
    x_cpu = features[step * BATCH:(step + 1) * BATCH]
    y_cpu = labels[step * BATCH:(step + 1) * BATCH]
    saved = retry(snapshot)
    # As every attempt starts: without the last step's gradients.
    optimizer.zero_grad(set_to_none=True)
    before = usage()
    while True:
        attempts += 1
        try:
            # Every allocation reaches the driver: nothing cached, and a
            # buffer too large to share a segment with the small tensors.
            torch.openreg.empty_cache()
            torch.openreg.empty_host_cache()
            scratch = torch.empty(1 << 21, dtype=torch.uint8, device="openreg")
            x = x_cpu.pin_memory().to("openreg", non_blocking=True)
            y = y_cpu.to("openreg")
            torch.openreg.Event().record()
            loss = example.train_step(model, optimizer, x, y)
            losses.append(loss.item())
            break
        except RuntimeError as error:
            note(error)
        # Abandon the attempt: drop its tensors, put back the parameters and
        # optimizer state it may have changed. Then only those and the
        # snapshot are left.
        scratch = x = y = loss = None
        retry(lambda: restore(saved))
        now = usage()
        if now != before:
            mismatches.append((step, before, now))
    del saved, scratch, x, y, loss

final = retry(lambda: [p.detach().cpu() for p in params])
torch.save(final, "{out}")
del model, optimizer, params
torch.openreg.synchronize()
torch.openreg.empty_cache()
torch.openreg.empty_host_cache()
end = usage()
host = torch.openreg.host_memory_stats()
print(json.dumps({{
    "counts": counts,
    "attempts": attempts,
    "steps": STEPS,
    "losses": losses,
    "mismatches": mismatches,
    "baseline": baseline,
    "end": end,
    "reserved": torch.openreg.memory_reserved(),
    "host_allocated": host["allocated_bytes.current"],
}}))
"""

STEPS = 120
# Launches, copies and event records at 3% (a step makes about 80 such
# calls): most attempts fail. Allocations at 50%, with the caching allocator
# told not to free its cache and retry on out-of-memory, which would absorb
# most faults; it still retries once after the queued work has finished, so a
# fault reaches Python when both tries fail.
PHASES = {
    "async": {"OPENREG_DRIVER_OPTIONS": "fault_points=launch_host_func+memcpy_async+event_record,fault_rate=0.03,fault_seed=1"},
    "allocation": {
        "OPENREG_DRIVER_OPTIONS": "fault_points=device_malloc+host_malloc,fault_rate=0.5,fault_seed=2",
        "OPENREG_ALLOC_CONF": "release_on_oom:false",
    },
}


def train(tmp_path, name, env):
    out = tmp_path / f"{name}.pt"
    result = run_python(WORKER.format(steps=STEPS, out=out), env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    report["params"] = torch.load(out)
    return report


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return train(tmp_path_factory.mktemp("reference"), "reference", {"OPENREG_DRIVER_OPTIONS": None})


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_training_survives_injected_faults(tmp_path, reference, phase):
    report = train(tmp_path, phase, PHASES[phase])
    print(f"{DRIVER} {phase}: {json.dumps({k: report[k] for k in ('counts', 'attempts', 'steps')})}")
    assert report["counts"], "no fault was injected"
    assert report["mismatches"] == [], "allocator statistics not back after a failed step"
    assert report["end"] == report["baseline"] == [0, 0]
    assert report["reserved"] == 0 and report["host_allocated"] == 0
    assert reference["counts"] == {}
    assert report["losses"] == reference["losses"]
    for got, want in zip(report["params"], reference["params"]):
        assert torch.equal(got, want)
    if phase == "async":
        assert sum(report["counts"].values()) >= 1000
        assert {key.split(":")[0] for key in report["counts"]} == {"launch_host_func", "memcpy_async", "event_record"}
    else:
        assert any(key.startswith("device_malloc:OUT_OF_MEMORY:OutOfMemoryError") for key in report["counts"])
        assert any(key.startswith("host_malloc:OUT_OF_MEMORY:OutOfMemoryError") for key in report["counts"])
