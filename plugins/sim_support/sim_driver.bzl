"""sim_driver: the targets of one simulated driver (cpu_sim, threaded_sim)."""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

def sim_driver(name, srcs, hdrs, deps = [], linkopts = []):
    """Declares the driver `name` from its sources.

    `<name>_internal` holds the driver's code; it is private, the only way in
    is the .so's C entry point. `libopenreg_<name>.so` is the loadable driver,
    built from `<name>_driver.cc`. Its own code exports only
    OPENREG_DRIVER_ENTRY_SYMBOL: it is compiled with hidden visibility and
    driver.lds hides the rest. gold still exports the few weak std::string
    members that C++20 instantiates inline and libstdc++.so also defines; those
    copies are identical. The driver's conformance_expectations.txt is
    exported for its conformance test run (//tests/conformance).

    Args:
      name: the driver's name, e.g. "cpu_sim".
      srcs: the driver's sources, without `<name>_driver.cc`.
      hdrs: its headers.
      deps: further libraries of the driver's code.
      linkopts: further link options of the .so.
    """
    common_deps = [
        "//driver_abi",
        "//plugins/sim_support",
    ]
    cc_library(
        name = name + "_internal",
        srcs = srcs,
        hdrs = hdrs,
        copts = ["-fvisibility=hidden"],
        deps = common_deps + deps + ["@system_libs//:absl"],
    )
    cc_binary(
        name = "libopenreg_%s.so" % name,
        srcs = [name + "_driver.cc"],
        additional_linker_inputs = ["//plugins/sim_support:driver.lds"],
        copts = ["-fvisibility=hidden"],
        linkopts = [
            "-Wl,--version-script=$(location //plugins/sim_support:driver.lds)",
            "-Wl,--no-undefined",
        ] + linkopts,
        linkshared = True,
        visibility = ["//visibility:public"],
        deps = common_deps + [":%s_internal" % name],
    )
    native.exports_files(["conformance_expectations.txt"])
