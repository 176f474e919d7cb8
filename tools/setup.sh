#!/usr/bin/env bash
# Sets up everything openreg needs on a Debian 12 machine, then builds it and
# installs it into the project's virtual environment:
#   1. Debian packages: Bazel 4.2.3 and the C++ libraries the build links;
#      g++ (with OpenMP) and the Python headers, with which torch.compile's
#      Inductor builds the kernels it generates at run time (docs/compile.md);
#   2. the virtual environment ${OPENREG_VENV:-$HOME/.cache/openreg/venv} with
#      torch==2.13.0, numpy, pytest, matplotlib (the benchmark chart) and
#      expecttest (torch's test framework, which the OpInfo tests use, imports it);
#   3. .bazelrc.local: Bazel caches outside the clone, so fresh clones reuse
#      earlier builds (Inductor's cache for the compile tests is outside the
#      clone too: $HOME/.cache/openreg/inductor, made by Inductor itself);
#   4. only with --with-tsan: abseil's Debian source package, unpacked into
#      $HOME/.cache/openreg/abseil-src, which `bazel test --config=tsan`
#      compiles with -fsanitize=thread (Debian's libabsl is not instrumented);
#   5. `pip install .` of the project (it builds through Bazel), redone only
#      when a source file changed since the last install.
# Every step checks before it acts: when everything is in place this takes a
# fraction of a second and prints one line. Safe to run from any directory.
#
# Usage: bash tools/setup.sh [--force] [--with-tsan]
#   --force       reinstall the project even if no source file changed.
#   --with-tsan   also fetch the abseil sources --config=tsan builds from.
set -euo pipefail

readonly TORCH_VERSION="2.13.0"
# g++ and python3-dev: Inductor compiles generated C++ at run time; its CPU
# kernels (also part of graphs on openreg) include Python.h.
readonly APT_PACKAGES=(bazel-bootstrap libgtest-dev libgmock-dev libabsl-dev libbenchmark-dev g++ python3-dev)
readonly PYTHON_PACKAGES=("torch==${TORCH_VERSION}" numpy pytest matplotlib expecttest)

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
with_tsan=0
for arg in "$@"; do
  case "${arg}" in
    --force) force=1 ;;
    --with-tsan) with_tsan=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '${arg}'." "Usage: bash tools/setup.sh [--force] [--with-tsan]" ;;
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
# Where --with-tsan unpacks abseil's sources; third_party/absl_source.bzl reads
# the same path.
absl_src="${HOME}/.cache/openreg/abseil-src"
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
metadata.version("matplotlib")
metadata.version("expecttest")
EOF
}

if ! python_packages_present; then
  step "Installing ${PYTHON_PACKAGES[*]} into ${venv}"
  "${venv_python}" -m pip install "${PYTHON_PACKAGES[@]}" \
    || die "pip install ${PYTHON_PACKAGES[*]} failed (see above)." \
           "Check that PyPI is reachable (pip config list), then run tools/setup.sh again."
  "${venv_python}" -c "import torch, numpy, pytest, matplotlib, expecttest; assert torch.__version__.startswith('${TORCH_VERSION}'), torch.__version__" \
    || die "torch, numpy, pytest, matplotlib or expecttest do not import in ${venv} after installing them (see above)." \
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

# --- 4. abseil's sources, for --config=tsan (only with --with-tsan) ----------
# ThreadSanitizer only sees absl::Mutex being taken when abseil itself is
# compiled with -fsanitize=thread, and Debian ships it uninstrumented. Under
# --config=tsan, Bazel compiles abseil from Debian's source package of exactly
# the installed libabsl-dev version (so the headers match what
# third_party/absl_source.bzl builds), unpacked outside the clone.
absl_src_version() {  # the Debian version of the unpacked sources, if any
  local first_line
  first_line="$(head -n 1 "${absl_src}/debian/changelog" 2>/dev/null)" || return 0
  first_line="${first_line#*(}"
  printf '%s\n' "${first_line%%)*}"
}

# The deb-src counterpart of one apt source entry, given as apt's
# "Sourcesentry" (FILE:N: the Nth stanza of a deb822 .sources file, or line N of
# a one-line-style list): the same archive, suites, components and keyring.
deb_src_entry() {
  local file="${1%:*}" n="${1##*:}"
  case "${file}" in
    *.sources)
      awk -v n="${n}" 'BEGIN { RS = ""; FS = "\n" }
        /(^|\n)[Tt]ypes:/ && ++k == n {
          for (i = 1; i <= NF; i++) {
            if ($i ~ /^[ \t]*#/) continue
            print ($i ~ /^[Tt]ypes:/ ? "Types: deb-src" : $i)
          }
          print ""
        }' "${file}" ;;
    *) sed -n "${n}p" "${file}" | sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' ;;
  esac
}

source_offered() {  # source package, version
  apt-cache showsrc --only-source "$1" 2>/dev/null | grep -qxF "Version: $2"
}

# When no configured deb-src entry offers abseil's source package at the
# installed libabsl-dev version (after an apt-get update, in case the lists are
# old), adds the deb-src counterparts of the entries that libabsl-dev came
# from, in files of their own.
ensure_deb_src() {
  local source_package="$1" version="$2"
  if source_offered "${source_package}" "${version}"; then
    return 0
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update \
    || die "apt-get update failed (see above)." \
           "Check that the Debian package mirrors are reachable and that you may use apt (root or sudo)."
  if source_offered "${source_package}" "${version}"; then
    return 0
  fi
  local -a origins
  # apt-cache madison: "libabsl-dev | VERSION | URI SUITE/COMPONENT ARCH Packages";
  # the last part is what apt-get indextargets calls the index's description.
  mapfile -t origins < <(
    apt-get indextargets --format '$(DESCRIPTION)|$(SOURCESENTRY)' 'Created-By: Packages' \
      | awk -F'|' -v v="${version}" '
          NR == FNR { gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); if ($2 == v) want[$3] = 1; next }
          ($1 in want) { print $2 }' <(apt-cache madison libabsl-dev) - \
      | sort -u)
  ((${#origins[@]} > 0)) \
    || die "no configured Debian archive offers libabsl-dev ${version} (apt-cache madison libabsl-dev)." \
           "Upgrade it (apt-get update && apt-get install libabsl-dev), then run tools/setup.sh --with-tsan again."
  local origin deb822="" one_line="" header
  for origin in "${origins[@]}"; do
    case "${origin%:*}" in
      *.sources) deb822+="$(deb_src_entry "${origin}")"$'\n\n' ;;
      *) one_line+="$(deb_src_entry "${origin}")"$'\n' ;;
    esac
  done
  header="# Written by openreg's tools/setup.sh --with-tsan: the sources of abseil (libabsl-dev), which
# bazel test --config=tsan compiles with -fsanitize=thread. Mirrors the deb entries libabsl-dev comes from."
  local -a written=()
  if [[ -n "${deb822}" ]]; then
    printf '%s\n%s' "${header}" "${deb822%$'\n'}" | as_root tee /etc/apt/sources.list.d/openreg-deb-src.sources >/dev/null
    written+=(/etc/apt/sources.list.d/openreg-deb-src.sources)
  fi
  if [[ -n "${one_line}" ]]; then
    printf '%s\n%s' "${header}" "${one_line}" | as_root tee /etc/apt/sources.list.d/openreg-deb-src.list >/dev/null
    written+=(/etc/apt/sources.list.d/openreg-deb-src.list)
  fi
  step "Added deb-src entries for ${source_package}: ${written[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update \
    || die "apt-get update failed after adding ${written[*]} (see above)." \
           "Fix or remove them, then run tools/setup.sh --with-tsan again."
  source_offered "${source_package}" "${version}" \
    || die "${source_package} ${version} is not offered by the deb-src entries in ${written[*]}." \
           "Compare them with your deb entries (apt-cache policy libabsl-dev), then run tools/setup.sh --with-tsan again."
}

if ((with_tsan)); then
  absl_version="$(dpkg-query -W -f='${Version}' libabsl-dev)"
  if [[ "$(absl_src_version)" != "${absl_version}" ]]; then
    absl_source_package="$(dpkg-query -W -f='${source:Package}' libabsl-dev)"
    mapfile -t missing < <(missing_apt_packages dpkg-dev)  # dpkg-source unpacks it
    if ((${#missing[@]} > 0)); then
      apt_install "${missing[@]}"
    fi
    ensure_deb_src "${absl_source_package}" "${absl_version}"
    step "Fetching ${absl_source_package} ${absl_version} (Debian source package) into ${absl_src}"
    mkdir -p "$(dirname "${absl_src}")"
    download_dir="$(mktemp -d "${absl_src}.download.XXXXXX")"
    # apt-get source unpacks (and patches) into <package>-<upstream version>/.
    # As root, download as root: apt's _apt user may not write into the
    # private download directory (apt would fall back to root with a warning).
    apt_source_options=()
    if ((EUID == 0)); then apt_source_options=(-o APT::Sandbox::User=root); fi
    (cd "${download_dir}" && apt-get "${apt_source_options[@]}" source --only-source "${absl_source_package}=${absl_version}") \
      || { rm -rf "${download_dir}"; die "apt-get source ${absl_source_package}=${absl_version} failed (see above)." \
             "Check that the Debian archive is reachable, then run tools/setup.sh --with-tsan again."; }
    unpacked="$(find "${download_dir}" -mindepth 3 -maxdepth 3 -path '*/debian/changelog' -printf '%h\n' -quit)"
    unpacked="${unpacked%/debian}"
    [[ -n "${unpacked}" && -f "${unpacked}/absl/base/options.h" ]] \
      || { rm -rf "${download_dir}"; die "apt-get source left no abseil source tree in ${download_dir}."; }
    rm -rf "${absl_src}"
    mv "${unpacked}" "${absl_src}"
    rm -rf "${download_dir}"
    [[ "$(absl_src_version)" == "${absl_version}" ]] \
      || die "the unpacked sources in ${absl_src} are version '$(absl_src_version)', not ${absl_version}."
    did_something=1
  fi
fi

# --- 5. The project itself -----------------------------------------------------
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
