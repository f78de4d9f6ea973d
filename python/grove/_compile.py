"""grove.compile: grove source to a shared library, the compiler in process."""
import atexit
import os
import shutil
import subprocess
import tempfile

from . import _core

_SCRATCH = []


def _scratch_dir():
    """A directory for this process's libraries, removed at exit (a loaded
    library stays mapped after its file is gone)."""
    if not _SCRATCH:
        path = tempfile.mkdtemp(prefix="grove-")
        _SCRATCH.append(path)
        atexit.register(shutil.rmtree, path, True)
    return _SCRATCH[0]


def _option_string(options):
    """Keyword options as the pipeline's option string: `data_parallel=True`
    is `data-parallel=true` (include/grove/Pipelines/PipelineOptions.def)."""
    parts = []
    for key, value in options.items():
        if key == "module_name":
            raise TypeError("module_name is set by name=")
        if isinstance(value, bool):
            value = "true" if value else "false"
        value = str(value)
        if any(c in value for c in " {}="):
            value = "{" + value + "}"
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


def _read_source(source):
    """(text, name in diagnostics): a path (os.PathLike, or a str naming an
    existing file) or the module's text."""
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source
            and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    if not isinstance(source, str):
        raise TypeError("source: grove MLIR text or a path, not "
                        f"{type(source).__name__}")
    return source, "<string>"


def _link(obj, so, runtime):
    libdir = os.path.dirname(runtime)
    cc = os.environ.get("CC", "cc")
    cmd = [cc, "-shared", "-o", so, obj, "-L" + libdir,
           "-Wl,-rpath," + libdir, "-l:" + os.path.basename(runtime), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise _core.GroveError(f"linking {so} failed ({' '.join(cmd)}):\n"
                               f"{proc.stdout}{proc.stderr}")


def compile(source, *, target="host", opt_level=3, cpu="native", name=None,
            output_dir=None, **options):
    """Compiles a grove module into a shared library and returns its path.

    source: the module's MLIR text, or a path to it. target: "host" (the
    CUDA target compiles with grovec). cpu: "native" (default: the library
    runs where it is built), "" for the portable baseline, or an LLVM CPU
    name. name: the library's C name (default: the module's symbol name).
    output_dir: where lib<name>.so, <name>.h and <name>.o go (default: a
    directory removed when the process exits). Other keywords are pipeline
    options (`autocast="bf16"`, `data_parallel=True`, `loss_scale=0`, ...:
    docs/python.md).

    Raises CompileError (`.diagnostics`: `file:line:col: error: ...` lines)
    for bad source or options.
    """
    if target != "host":
        raise ValueError(f"target {target!r}: only 'host' compiles in "
                         "process (use grovec --target=cuda)")
    text, source_name = _read_source(source)
    lib_name, obj, header, _ = _core.compile(
        text, source_name, int(opt_level), cpu, name or "",
        _option_string(options))
    # By default a directory a call: each library is a new path to load.
    out = output_dir or tempfile.mkdtemp(dir=_scratch_dir())
    os.makedirs(out, exist_ok=True)
    obj_path = os.path.join(out, lib_name + ".o")
    with open(obj_path, "wb") as f:
        f.write(obj)
    with open(os.path.join(out, lib_name + ".h"), "w") as f:
        f.write(header)
    so = os.path.join(out, f"lib{lib_name}.so")
    # A new inode, never rewritten in place: a library already loaded from
    # this path keeps its mapping.
    tmp = so + ".tmp"
    _link(obj_path, tmp, _core.runtime_library())
    os.replace(tmp, so)
    return so
