#!/usr/bin/env bash
# Sets up everything openreg needs on a Debian 12 machine, then builds it and
# installs it into the project's virtual environment:
#   1. Debian packages: Bazel 4.2.3 and the C++ libraries the build links;
#   2. the virtual environment ${OPENREG_VENV:-$HOME/.cache/openreg/venv} with
#      torch==2.13.0, numpy and pytest;
#   3. .bazelrc.local: Bazel caches outside the clone, so fresh clones reuse
#      earlier builds;
#   4. `pip install .` of the project (it builds through Bazel), redone only
#      when a source file changed since the last install.
# Every step checks before it acts: when everything is in place this takes a
# fraction of a second and prints one line. Safe to run from any directory.
#
# Usage: bash tools/setup.sh [--force]
#   --force   reinstall the project even if no source file changed.
set -euo pipefail

readonly TORCH_VERSION="2.13.0"
readonly APT_PACKAGES=(bazel-bootstrap libgtest-dev libgmock-dev libabsl-dev libbenchmark-dev)
readonly PYTHON_PACKAGES=("torch==${TORCH_VERSION}" numpy pytest)

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}

die() {
  printf 'tools/setup.sh: error: %s\n' "$1" >&2
  shift
  local line
  for line in "$@"; do
    printf '  %s\n' "$line" >&2
  done
  exit 1
}

step() {
  printf '==> %s\n' "$*"
}

force=0
for arg in "$@"; do
  case "${arg}" in
    --force) force=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '${arg}'." "Usage: bash tools/setup.sh [--force]" ;;
  esac
done

: "${HOME:?tools/setup.sh: HOME is not set; it locates the virtual environment and the Bazel caches}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"

venv="${OPENREG_VENV:-${HOME}/.cache/openreg/venv}"
case "${venv}" in
  /*) ;;
  *) die "OPENREG_VENV must be an absolute path, got '${venv}'." \
        "Bazel's repository rules read the same variable from a different working directory." ;;
esac
venv_python="${venv}/bin/python"
bazel_cache="${HOME}/.cache/openreg/bazel"
source_stamp="${venv}/.openreg-source-stamp"

# Runs a command as root: directly when we are root, through sudo otherwise
# (non-interactively when there is no terminal to ask for a password on).
as_root() {
  if [[ ${EUID} -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    if [[ -t 0 ]]; then sudo "$@"; else sudo -n "$@"; fi
  else
    die "'$*' needs root, and sudo is not installed." \
        "Run tools/setup.sh as root, or install sudo."
  fi
}

missing_apt_packages() {
  local package
  for package in "$@"; do
    if [[ "$(dpkg-query -W -f='${Status}' "${package}" 2>/dev/null || true)" != "install ok installed" ]]; then
      printf '%s\n' "${package}"
    fi
  done
}

apt_install() {
  step "Installing Debian packages: $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update \
    || die "apt-get update failed (see above)." \
           "Check that the Debian package mirrors are reachable and that you may use apt (root or sudo)."
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" \
    || die "apt-get install $* failed (see above)." \
           "Fix the apt error, then run tools/setup.sh again."
}

# --- 1. Debian packages ------------------------------------------------------
command -v dpkg-query >/dev/null 2>&1 \
  || die "dpkg-query not found: tools/setup.sh supports Debian 12 only." \
         "Elsewhere, install Bazel 4.2.3, GoogleTest/GoogleMock, abseil 20220623 and Google Benchmark by hand."
needed=("${APT_PACKAGES[@]}")
if [[ ! -x "${venv_python}" ]]; then
  # Only creating the virtual environment needs these.
  needed+=(python3 python3-venv)
fi
mapfile -t missing < <(missing_apt_packages "${needed[@]}")
if ((${#missing[@]} > 0)); then
  apt_install "${missing[@]}"
fi
did_something=$((${#missing[@]} > 0))

# --- 2. Virtual environment ----------------------------------------------------
if [[ ! -x "${venv_python}" ]]; then
  step "Creating the virtual environment ${venv}"
  mkdir -p "$(dirname "${venv}")"
  python3 -m venv "${venv}" \
    || die "python3 -m venv ${venv} failed (see above)." \
           "If a half-created environment is left, remove it (rm -rf '${venv}') and run tools/setup.sh again."
  did_something=1
fi

# Importing torch takes seconds, too slow for the no-op path: read the
# installed distributions' metadata instead. The full import is checked after
# every install.
python_packages_present() {
  "${venv_python}" - "${TORCH_VERSION}" <<'EOF' >/dev/null 2>&1
import sys
from importlib import metadata
assert metadata.version("torch").startswith(sys.argv[1])
metadata.version("numpy")
metadata.version("pytest")
EOF
}

if ! python_packages_present; then
  step "Installing ${PYTHON_PACKAGES[*]} into ${venv}"
  "${venv_python}" -m pip install "${PYTHON_PACKAGES[@]}" \
    || die "pip install ${PYTHON_PACKAGES[*]} failed (see above)." \
           "Check that PyPI is reachable (pip config list), then run tools/setup.sh again."
  "${venv_python}" -c "import torch, numpy, pytest; assert torch.__version__.startswith('${TORCH_VERSION}'), torch.__version__" \
    || die "torch, numpy or pytest do not import in ${venv} after installing them (see above)." \
           "Remove the environment (rm -rf '${venv}') and run tools/setup.sh again."
  did_something=1
fi

# --- 3. .bazelrc.local ---------------------------------------------------------
bazelrc_local="# Written by tools/setup.sh (rewritten whenever it differs); not under version control.
# Caches outside the clone, so fresh clones and CI reuse earlier builds.
build --disk_cache=${bazel_cache}/disk
build --repository_cache=${bazel_cache}/repository"
if [[ ! -f .bazelrc.local || "$(<.bazelrc.local)" != "${bazelrc_local}" ]]; then
  step "Writing .bazelrc.local (Bazel caches in ${bazel_cache})"
  mkdir -p "${bazel_cache}/disk" "${bazel_cache}/repository"
  printf '%s\n' "${bazelrc_local}" >.bazelrc.local.tmp
  mv -f .bazelrc.local.tmp .bazelrc.local
  did_something=1
fi

# --- 4. The project itself -----------------------------------------------------
# A hash of every file git tracks or would track (path and contents), plus the
# torch version the binaries are built against. Falls back to walking the tree
# when this is not a git checkout.
source_hash() {
  "${venv_python}" - <<'EOF'
import hashlib, os, subprocess
from importlib import metadata

def listed_files():
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True).stdout
        return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "build", "__pycache__"}
        found = []
        for root, dirs, files in os.walk("."):
            dirs[:] = [d for d in dirs if d not in skip and not d.startswith("bazel-")
                       and not d.endswith(".egg-info")]
            found += [os.path.relpath(os.path.join(root, f)) for f in files]
        return sorted(found)

digest = hashlib.sha256(("torch " + metadata.version("torch") + "\0").encode())
for path in listed_files():
    digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
    if os.path.islink(path):
        digest.update(b"link:" + os.readlink(path).encode("utf-8", "surrogateescape"))
    elif os.path.isfile(path):
        with open(path, "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    else:
        digest.update(b"missing")
print(digest.hexdigest())
EOF
}

current_hash="$(source_hash)" || die "could not hash the source tree (see above)."
installed_hash="$(cat "${source_stamp}" 2>/dev/null || true)"
if ((force)) || [[ "${current_hash}" != "${installed_hash}" ]]; then
  command -v bazel >/dev/null 2>&1 \
    || die "bazel is not on PATH although bazel-bootstrap is installed." \
           "Check that /usr/bin/bazel exists (dpkg -L bazel-bootstrap), or reinstall: apt-get install --reinstall bazel-bootstrap."
  # Build first, in the open, so the (long) first build shows its progress;
  # pip's own build then finds everything up to date.
  step "Building //bindings:package_binaries with Bazel"
  bazel build //bindings:package_binaries \
    || die "bazel build //bindings:package_binaries failed (see above)." \
           "Fix the build error, then run tools/setup.sh again."
  step "Installing openreg into ${venv}"
  rm -f "${source_stamp}"
  "${venv_python}" -m pip install --no-build-isolation --no-deps --force-reinstall . \
    || die "pip install . failed (see above)." \
           "Fix the error, then run tools/setup.sh again (--force reinstalls even if no file changed)."
  printf '%s\n' "${current_hash}" >"${source_stamp}"
  did_something=1
fi

if ((did_something)); then
  printf 'openreg is set up: %s\n' "${venv_python}"
else
  printf 'openreg: setup is up to date (%s)\n' "${venv}"
fi
