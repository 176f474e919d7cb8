"""openreg_py_test: one pytest file, run once per shipped driver."""

load("//plugins:drivers.bzl", "SHIPPED_DRIVERS")

def openreg_py_test(
        name,
        src,
        drivers = SHIPPED_DRIVERS,
        size = "medium",
        data = [],
        deps = [],
        shard_count = None,
        env = {},
        tags = []):
    """Declares `<name>_<driver>` for every driver in `drivers`.

    Each runs `src` under pytest with OPENREG_DRIVER=<driver>, importing the
    torch_openreg package built by Bazel (not an installed copy). Tests that
    compare timings should be tagged "exclusive", so no other test competes
    for the cores while they measure. With `shard_count`, Bazel runs each
    driver's test in that many processes, which the test file must split
    its work between (TEST_SHARD_INDEX of TEST_TOTAL_SHARDS). `env` adds
    environment variables, e.g. OPENREG_LAUNCH_BLOCKING for tests whose
    checks never synchronize, so a kernel that fails is reported by the test
    that ran it instead of going unseen.

    Every test runs with OMP_WAIT_POLICY=passive unless `env` says otherwise.
    Bazel runs several tests at once on the machine's cores, each with an
    OpenMP pool as wide as the machine; spinning barriers then wait for
    descheduled team-mates, and one module_db shard took 250 s instead of
    32 s (docs/performance.md, "Backward on the calling thread"). Tests
    check behaviour, not speed; benchmarks run with libgomp's defaults.
    """
    env = dict({"OMP_WAIT_POLICY": "passive"}, **env)
    for driver in drivers:
        native.py_test(
            name = "%s_%s" % (name, driver),
            srcs = ["pytest_runner.py", src],
            main = "pytest_runner.py",
            args = [driver, "$(location %s)" % src],
            data = data,
            env = env,
            python_version = "PY3",
            size = size,
            shard_count = shard_count,
            tags = tags,
            deps = [
                ":test_support",
                "//bindings/python:torch_openreg",
            ] + deps,
        )
