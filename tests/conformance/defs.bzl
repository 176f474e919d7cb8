"""driver_conformance_test: the driver-generic test suite, run against one driver."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def driver_conformance_test(name, driver, options = "", size = "small", **kwargs):
    """Runs the conformance suite against the driver library `driver`.

    Args:
      name: the test's name.
      driver: label of a driver .so (e.g. driver_label("cpu_sim") from
        //plugins:drivers.bzl).
      options: the driver options string passed to every init of the suite,
        e.g. "adversarial=1".
      size: the test size.
      **kwargs: passed to cc_test (tags, timeout, ...).
    """
    args = ["--openreg_driver=$(rootpath %s)" % driver]
    if options:
        args.append("--openreg_driver_options=" + options)
    cc_test(
        name = name,
        size = size,
        args = args,
        data = [driver],
        deps = ["//tests/conformance:conformance_suite"],
        **kwargs
    )
