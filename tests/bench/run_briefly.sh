#!/usr/bin/env bash
# Runs a Google Benchmark binary ($1) for a moment per benchmark; its exit
# status is the test's.
set -euo pipefail
exec "$1" --benchmark_min_time=0.01
