"""driver_conformance_test: the driver-generic test suite, run against one driver."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def driver_conformance_test(name, driver, options = "", expectations = None, size = "small", **kwargs):
    """Runs the conformance suite against the driver library `driver`.

    Args:
      name: the test's name.
      driver: label of a driver .so (e.g. driver_label("cpu_sim") from
        //plugins:drivers.bzl).
      options: the driver options string passed to every init of the suite,
        e.g. "adversarial=1".
      expectations: label of the driver's expectations file (unsupported
        tests and expected failures, see expectations.h), or None.
      size: the test size.
      **kwargs: passed to cc_test (tags, timeout, ...).
    """
    args = ["--openreg_driver=$(rootpath %s)" % driver]
    data = [driver]
    if options:
        args.append("--openreg_driver_options=" + options)
    if expectations:
        args.append("--openreg_expectations=$(rootpath %s)" % expectations)
        data.append(expectations)
    cc_test(
        name = name,
        size = size,
        args = args,
        data = data,
        deps = ["//tests/conformance:conformance_suite"],
        **kwargs
    )
