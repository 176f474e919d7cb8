"""Repository rules that bring the project's Python virtual environment into Bazel.

`python_venv_repository` registers the venv interpreter as the Python toolchain
(so py_test runs with it, never with whatever `python3` is on PATH) and exposes
the interpreter's C headers. `torch_repository` exposes the pip-installed
torch's headers, its bundled pybind11 and its shared libraries.

The venv is `$OPENREG_VENV`, or `$HOME/.cache/openreg/venv` (where
tools/setup.sh creates it). It lives outside the clone so fresh clones (CI)
reuse it.
"""

_SETUP_HINT = "Run `bash tools/setup.sh` to create it, or point OPENREG_VENV at a virtual environment with torch==2.13.0."

def _venv_python(repository_ctx):
    venv = repository_ctx.os.environ.get("OPENREG_VENV", "")
    if not venv:
        home = repository_ctx.os.environ.get("HOME", "")
        if not home:
            fail("Cannot locate the openreg virtual environment: neither OPENREG_VENV nor HOME is set. " + _SETUP_HINT)
        venv = home + "/.cache/openreg/venv"
    python = repository_ctx.path(venv + "/bin/python")
    if not python.exists:
        fail("Expected the openreg virtual environment's interpreter at %s, found nothing. %s" % (python, _SETUP_HINT))
    return python

def _query(repository_ctx, python, code):
    result = repository_ctx.execute([python, "-c", code])
    if result.return_code != 0:
        fail("%s failed while configuring Bazel:\n%s\n%s" % (python, result.stderr, _SETUP_HINT))
    return result.stdout.strip()

def _python_venv_repository_impl(repository_ctx):
    python = _venv_python(repository_ctx)
    include_dir = _query(repository_ctx, python, "import sysconfig; print(sysconfig.get_paths()['include'])")
    repository_ctx.symlink(include_dir, "include")
    repository_ctx.template("BUILD.bazel", repository_ctx.attr._build_template, {
        "%{interpreter}": str(python),
    })

python_venv_repository = repository_rule(
    implementation = _python_venv_repository_impl,
    environ = ["OPENREG_VENV", "HOME"],
    attrs = {"_build_template": attr.label(default = "//third_party:python_venv.BUILD.tpl")},
    local = True,
)

_TORCH_QUERY = """
import os, torch
root = os.path.dirname(torch.__file__)
print(torch.__version__)
print(os.path.join(root, "include"))
print(os.path.join(root, "lib"))
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
"""

def _torch_repository_impl(repository_ctx):
    python = _venv_python(repository_ctx)
    version, include_dir, lib_dir, cxx11_abi = _query(repository_ctx, python, _TORCH_QUERY).split("\n")
    if not version.startswith(repository_ctx.attr.expected_version):
        fail("openreg builds against torch %s, but %s has torch %s. Run `bash tools/setup.sh` to install torch==%s." % (
            repository_ctx.attr.expected_version,
            python,
            version,
            repository_ctx.attr.expected_version,
        ))
    repository_ctx.symlink(include_dir, "include")
    repository_ctx.symlink(lib_dir, "lib")
    repository_ctx.template("BUILD.bazel", repository_ctx.attr._build_template, {
        "%{cxx11_abi}": cxx11_abi,
        "%{version}": version,
    })

torch_repository = repository_rule(
    implementation = _torch_repository_impl,
    environ = ["OPENREG_VENV", "HOME"],
    attrs = {
        "expected_version": attr.string(mandatory = True),
        "_build_template": attr.label(default = "//third_party:torch.BUILD.tpl"),
    },
    local = True,
)
