"""Builds the torch_openreg package through Bazel.

The static metadata (name, version, entry point) is in pyproject.toml. This
file adds the build step: `build_py` runs `bazel build
//bindings:package_binaries` and copies the results into the package:

    torch_openreg/_C.so                       the pybind11 extension
    torch_openreg/lib/libopenreg_<name>.so    one per shipped driver

Bazel reads the same .bazelrc (and .bazelrc.local's disk cache) as `bazel
test`, so after a test run this build is a cache hit.
"""

import glob
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.errors import ExecError

REPO_ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "torch_openreg"
PACKAGE_SOURCE_DIR = os.path.join(REPO_ROOT, "bindings", "python", PACKAGE)
BAZEL_TARGET = "//bindings:package_binaries"
EXTENSION = "bindings/_C.so"
DRIVER_GLOB = "plugins/*/libopenreg_*.so"
SETUP_HINT = "run `bash tools/setup.sh`, which installs Bazel and the libraries it needs"


def _bazel(*args, capture=False):
    bazel = shutil.which("bazel")
    if bazel is None:
        raise ExecError(f"bazel was not found on PATH, and openreg builds with Bazel: {SETUP_HINT}.")
    command = [bazel, *args]
    result = subprocess.run(command, cwd=REPO_ROOT, stdout=subprocess.PIPE if capture else None, text=True)
    if result.returncode != 0:
        raise ExecError(
            f"`bazel {' '.join(args)}` failed with exit code {result.returncode} (its output is above). "
            f"Fix the error; if Bazel or a system library is missing, {SETUP_HINT}."
        )
    return result.stdout


def build_binaries():
    """Builds the binaries; returns (source path, path inside the package) pairs."""
    _bazel("build", BAZEL_TARGET)
    # Asked of Bazel rather than read from the bazel-bin symlink, which the
    # last Bazel command of any configuration (say --config=asan) repoints.
    bazel_bin = _bazel("info", "bazel-bin", capture=True).strip()
    extension = os.path.join(bazel_bin, EXTENSION)
    if not os.path.isfile(extension):
        raise ExecError(f"{BAZEL_TARGET} built, but {extension} is missing: does the target still include //bindings:_C.so?")
    drivers = sorted(glob.glob(os.path.join(bazel_bin, DRIVER_GLOB)))
    if not drivers:
        raise ExecError(f"{BAZEL_TARGET} built, but no driver matches {os.path.join(bazel_bin, DRIVER_GLOB)}.")
    return [(extension, "_C.so")] + [(driver, os.path.join("lib", os.path.basename(driver))) for driver in drivers]


def _copy_binary(source, destination):
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    # Bazel's outputs are read-only; a plain copy over an earlier one would fail.
    if os.path.lexists(destination):
        os.remove(destination)
    shutil.copyfile(source, destination)
    os.chmod(destination, 0o755)


class BuildPyWithBazel(build_py):
    """build_py that also builds and copies the Bazel-built binaries."""

    def run(self):
        super().run()
        # An editable install imports the package from its source folder (the
        # copies there are gitignored); a normal one from build_lib.
        if getattr(self, "editable_mode", False):
            package_dir = PACKAGE_SOURCE_DIR
        else:
            package_dir = os.path.join(self.build_lib, PACKAGE)
        binaries = build_binaries()
        wanted = {os.path.join(package_dir, relative) for _, relative in binaries}
        # A driver removed from the build must not linger from an earlier one.
        for stale in glob.glob(os.path.join(package_dir, "lib", "libopenreg_*.so")):
            if stale not in wanted:
                os.remove(stale)
        for source, relative in binaries:
            _copy_binary(source, os.path.join(package_dir, relative))


class BinaryDistribution(Distribution):
    """Marks the wheel platform-specific: it carries shared objects."""

    def has_ext_modules(self):
        return True


# egg_info's scratch output goes to build/ rather than into bindings/python/.
os.makedirs(os.path.join(REPO_ROOT, "build"), exist_ok=True)

setup(
    cmdclass={"build_py": BuildPyWithBazel},
    distclass=BinaryDistribution,
    options={"egg_info": {"egg_base": "build"}},
)
