#!/usr/bin/env bash
# bench/core_to_core_latency ($1): a bad round-trip count is refused with a
# message naming it, and a run prints nanoseconds per round trip (or, on a
# machine with one CPU, says it needs two).
set -uo pipefail
probe="$1"

output="$("${probe}" -3 2>&1)"; status=$?
if [[ ${status} -ne 2 || "${output}" != *'round_trips must be a positive integer, got "-3"'* ]]; then
  echo "expected exit 2 and the round_trips message for -3, got ${status}: ${output}" >&2
  exit 1
fi

output="$("${probe}" 2000 2>&1)"; status=$?
if [[ $(nproc) -lt 2 ]]; then
  [[ ${status} -eq 1 && "${output}" == *"needs two CPUs"* ]] && exit 0
  echo "expected the two-CPU message on a one-CPU machine, got ${status}: ${output}" >&2
  exit 1
fi
if [[ ${status} -ne 0 || ! "${output}" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  echo "expected nanoseconds per round trip, got ${status}: ${output}" >&2
  exit 1
fi
