"""Repository rule that exposes Debian's system C++ libraries to Bazel.

abseil (libabsl-dev), GoogleTest (libgtest-dev, libgmock-dev) and Google
Benchmark (libbenchmark-dev) are installed by tools/setup.sh; this rule checks
they are there, with an error naming the missing package, and generates
cc_library targets that link them. Their headers are in /usr/include, which the
compiler searches already.
"""

_REQUIRED = {
    "absl/status/statusor.h": "libabsl-dev",
    "gtest/gtest.h": "libgtest-dev",
    "gmock/gmock.h": "libgmock-dev",
    "benchmark/benchmark.h": "libbenchmark-dev",
}

def _system_libs_impl(repository_ctx):
    include_dir = repository_ctx.attr.include_dir
    lib_dir = repository_ctx.path(repository_ctx.attr.lib_dir)
    for header, package in _REQUIRED.items():
        if not repository_ctx.path(include_dir + "/" + header).exists:
            fail("Expected %s/%s from the Debian package %s, found nothing. Run `bash tools/setup.sh` (or `apt-get install %s`)." % (
                include_dir,
                header,
                package,
                package,
            ))
    absl_libs = sorted([
        f.basename[len("lib"):-len(".so")]
        for f in lib_dir.readdir()
        if f.basename.startswith("libabsl_") and f.basename.endswith(".so")
    ])
    repository_ctx.template("BUILD.bazel", repository_ctx.attr._build_template, {
        "%{absl_linkopts}": repr(
            ["-Wl,--push-state,--as-needed"] + ["-l" + lib for lib in absl_libs] + ["-Wl,--pop-state"],
        ),
    })

system_libs = repository_rule(
    implementation = _system_libs_impl,
    attrs = {
        "include_dir": attr.string(default = "/usr/include"),
        "lib_dir": attr.string(default = "/usr/lib/x86_64-linux-gnu"),
        "_build_template": attr.label(default = "//third_party:system_libs.BUILD.tpl"),
    },
    local = True,
)
