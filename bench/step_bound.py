"""A training step on a driver that runs work on threads of its own, split into its kernels and its host.

    PYTHONPATH=<package> OPENREG_DRIVER=threaded_sim python bench/step_bound.py [--model GPT] [--rounds 10]
        [--calls 10]

Times one of bench/models.py's steps (the first whose name contains --model) three ways, round after round:
- CPU eager, in a process that never loads openreg (reference_process.py), as the benchmark's model rows do;
- openreg's eager step, in a process that never replays a graph (a replay on threaded_sim changes how that
  process's OpenMP barriers wait, docs/graphs.md);
- a replay, in this process, of a torch.openreg.Graph of the same step built with a capturable optimizer: the
  step's kernels, run by the stream's worker while the Python thread only waits. A capturable Adam keeps its
  step count on the device and runs a few more kernels than the eager step's, so the replay, if anything,
  overstates what the kernels alone cost.
Prints each one's median time per step and its median ratio to CPU eager, with the 10th-90th percentile of the
rounds' ratios. The eager step minus the replay is what the host's work (Python, the dispatcher, openreg's
per-op path, the autograd device thread) adds to the step where it does not overlap the kernels
(docs/performance.md, "threaded_sim's GPT-2 step: the kernels alone and the host").
"""
import argparse
import functools
import statistics

import models
from cases import captured, seconds_per_call
from reference_process import ReferenceProcess, run_with_malloc_keeping_freed_memory


def spread(ratios):
    """The 10th and 90th percentiles (the extremes under ten rounds)."""
    if len(ratios) < 10:
        return min(ratios), max(ratios)
    deciles = statistics.quantiles(ratios, n=10)
    return deciles[0], deciles[-1]


def main():
    run_with_malloc_keeping_freed_memory()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="GPT", help="part of a bench/models.py model name")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of the three timings (at least 2)")
    parser.add_argument("--calls", type=int, default=models.DEFAULT_CALLS, help="steps per timing")
    args = parser.parse_args()
    try:
        name = models.model_named(args.model)
    except ValueError as error:
        parser.error(str(error))
    if args.rounds < 2 or args.calls < 1:
        parser.error(f"--rounds must be at least 2 and --calls at least 1, got {args.rounds} and {args.calls}")
    replay = captured(models.MODELS[name]("openreg", capturable=True))
    cpu, eager = ReferenceProcess("cpu"), ReferenceProcess("openreg")
    timings = {
        "CPU eager": functools.partial(cpu.seconds_per_call, "models", name),
        "openreg eager": functools.partial(eager.seconds_per_call, "models", name),
        "openreg graph replay": functools.partial(seconds_per_call, replay),
    }
    samples = {label: [] for label in timings}
    try:
        for _ in range(args.rounds + 1):
            for label, timing in timings.items():
                samples[label].append(timing(args.calls))
    finally:
        cpu.close()
        eager.close()
    # The first round pays one-time costs: the reference processes build their models.
    samples = {label: values[1:] for label, values in samples.items()}
    print(f"{name}, {args.rounds} rounds of {args.calls} steps, per step:")
    for label, values in samples.items():
        ratios = [value / reference for value, reference in zip(values, samples["CPU eager"])]
        low, high = spread(ratios)
        print(f"  {label:21s} {statistics.median(values) * 1e3:7.2f} ms  {statistics.median(ratios):.3f}x CPU eager "
              f"({low:.3f}-{high:.3f})", flush=True)


if __name__ == "__main__":
    main()
