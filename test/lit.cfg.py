# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GROVE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.grove_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%grove_src", config.grove_src_root))
config.substitutions.append(("%grove_obj", config.grove_obj_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%runtime_include", config.grove_runtime_include))
config.substitutions.append(("%grove_lib_dir", config.grove_lib_dir))
config.substitutions.append(("%blas_libs", config.blas_libraries))
config.substitutions.append(
    ("%grove_fatbin", config.python_executable + " " + os.path.join(
        config.grove_src_root, "tools", "grove-fatbin", "grove-fatbin.py")))

llvm_config.with_system_environment(["HOME", "TMPDIR", "OPENBLAS_CORETYPE",
                                     "OPENBLAS_L2_SIZE"])
llvm_config.use_default_substitutions()

tool_dirs = [config.grove_tools_dir, config.llvm_tools_dir]
tools = ["grove-opt", "grovec", "mlir-opt", "mlir-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.grove_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tests import the build's Python package (model generators use its
# builder, grove.ir and grove.nn), and the Grove helpers and numpy/torch.
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.grove_obj_root, "python_packages"),
    append_path=True)
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.grove_src_root, "test", "lib"),
    append_path=True)
# One GEMM thread per test process: lit runs tests in parallel, and an
# OpenMP team with a descheduled thread stalls calls for milliseconds.
config.environment["OPENBLAS_NUM_THREADS"] = "1"
config.environment["OMP_NUM_THREADS"] = "1"

# CUDA: `cuda-target` where the build has the CUDA target (a toolkit was
# found: compile, FileCheck and link tests run); `cuda-gpu` where a GPU can
# also run code (driver and device present: GPU numerics run). Elsewhere
# those tests report UNSUPPORTED, never PASS.
def _gpu_usable():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count))
            == 0 and count.value > 0)

if config.cuda_available:
    config.available_features.add("cuda-target")
    config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit_dir))
    config.environment["CUDA_HOME"] = config.cuda_toolkit_dir
    if _gpu_usable():
        config.available_features.add("cuda-gpu")
    else:
        lit_config.note("CUDA target built; no usable GPU here, so the "
                        "GPU tests (REQUIRES: cuda-gpu) are UNSUPPORTED")
else:
    lit_config.note("no CUDA toolkit: the CUDA target tests are UNSUPPORTED")

# Multi-process tests (REQUIRES: mpi): the runtime was built on MPI and
# mpirun is installed; elsewhere they report UNSUPPORTED.
import shutil
if config.mpi_available and shutil.which("mpirun"):
    config.available_features.add("mpi")
else:
    lit_config.note("no MPI (runtime built without it, or no mpirun): the "
                    "multi-process tests (REQUIRES: mpi) are UNSUPPORTED")

# Network-namespace experiments (REQUIRES: netns): root, iproute2 and tc;
# elsewhere UNSUPPORTED.
def _netns_usable():
    import subprocess
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return False
    return subprocess.run(["ip", "netns", "list"],
                          capture_output=True).returncode == 0

if _netns_usable():
    config.available_features.add("netns")
else:
    lit_config.note("not root, or no ip/tc: the network-namespace tests "
                    "(REQUIRES: netns) are UNSUPPORTED")
