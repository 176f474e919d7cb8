"""Repository rule for abseil compiled from Debian's source package.

Used only under `--config=tsan` (see @system_libs//:absl): ThreadSanitizer only
sees absl::Mutex being taken and released when abseil itself is compiled with
-fsanitize=thread, and Debian's libabsl shared libraries are not. Bazel fetches
a repository only when a target in it is needed, so builds without
`--define=openreg_absl=source` never run this rule and need no sources.

The sources are Debian's `abseil` source package of exactly the installed
libabsl-dev version (so they are the headers in /usr/include/absl, with Debian's
options.h, and the code of the system libraries), which
`bash tools/setup.sh --with-tsan` unpacks into $HOME/.cache/openreg/abseil-src,
outside the clone. This rule checks they are there and of that version, links
their C++ files in, applies the project's patches to copies of the files they
touch (absl_mutex_tsan.patch: a TSan false positive inside absl::Mutex that
later abseil releases fixed), and generates a cc_library that compiles the
parts of abseil the project uses with the build's flags (the sanitizer's
included).
"""

_SETUP_HINT = "Run `bash tools/setup.sh --with-tsan` to fetch them (only --config=tsan needs them)."

def _debian_version(changelog):
    # First line: "abseil (20220623.1-1+deb12u2) bookworm; urgency=medium".
    first_line = changelog.split("\n", 1)[0]
    if "(" not in first_line or ")" not in first_line:
        return ""
    return first_line.split("(", 1)[1].split(")", 1)[0]

def _absl_source_repository_impl(repository_ctx):
    src_dir = repository_ctx.attr.path
    if not src_dir:
        home = repository_ctx.os.environ.get("HOME", "")
        if not home:
            fail("Cannot locate abseil's sources for --config=tsan: HOME is not set. " + _SETUP_HINT)
        src_dir = home + "/.cache/openreg/abseil-src"
    src = repository_ctx.path(src_dir)
    changelog = src.get_child("debian").get_child("changelog")
    if not src.get_child("absl").get_child("base").get_child("options.h").exists or not changelog.exists:
        fail("--config=tsan compiles abseil from Debian's source package, expected in %s, found nothing there. %s" % (
            src,
            _SETUP_HINT,
        ))

    # The instrumented library must be the same abseil as the headers.
    installed = repository_ctx.execute(["dpkg-query", "-W", "-f=${Version}", "libabsl-dev"])
    if installed.return_code != 0:
        fail("dpkg-query found no libabsl-dev (%s). Run `bash tools/setup.sh --with-tsan`." % installed.stderr.strip())
    source_version = _debian_version(repository_ctx.read(changelog))
    if source_version != installed.stdout.strip():
        fail("abseil's sources in %s are version %s, but libabsl-dev %s is installed. %s" % (
            src,
            source_version or "(unknown)",
            installed.stdout.strip(),
            "Run `bash tools/setup.sh --with-tsan` to fetch the matching ones.",
        ))

    # Link the C++ files one by one: the upstream BUILD.bazel files next to
    # them would make every folder a package of its own (and they need
    # repositories we do not have).
    found = repository_ctx.execute([
        "find",
        "absl",
        "-type",
        "f",
        "(",
        "-name",
        "*.h",
        "-o",
        "-name",
        "*.inc",
        "-o",
        "-name",
        "*.cc",
        ")",
    ], working_directory = str(src))
    if found.return_code != 0:
        fail("Could not list abseil's sources in %s: %s" % (src, found.stderr))
    # Files the patches change are copied, so patching never writes through a
    # link into the unpacked sources.
    patched = {}
    for patch in repository_ctx.attr.patches:
        for line in repository_ctx.read(patch).splitlines():
            if line.startswith("+++ b/"):
                patched[line[len("+++ b/"):].split("\t")[0].strip()] = True
    for relative in found.stdout.splitlines():
        if relative in patched:
            repository_ctx.file(relative, repository_ctx.read("%s/%s" % (src, relative)), executable = False)
        else:
            repository_ctx.symlink("%s/%s" % (src, relative), relative)
    for patch in repository_ctx.attr.patches:
        repository_ctx.patch(patch, strip = 1)
    repository_ctx.template("BUILD.bazel", repository_ctx.attr._build_template, {
        "%{version}": source_version,
        "%{path}": str(src),
    })

absl_source_repository = repository_rule(
    implementation = _absl_source_repository_impl,
    environ = ["HOME"],
    attrs = {
        "path": attr.string(doc = "The unpacked source package; default $HOME/.cache/openreg/abseil-src."),
        "patches": attr.label_list(
            default = ["//third_party:absl_mutex_tsan.patch"],
            doc = "Applied (-p1) to copies of the files they change, after linking the sources in.",
        ),
        "_build_template": attr.label(default = "//third_party:absl_source.BUILD.tpl"),
    },
    local = True,
)
