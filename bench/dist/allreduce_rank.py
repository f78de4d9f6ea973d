"""One rank of bench/network.py's all-reduce measurement: grove_comm_all_reduce
(libgrove_rt, Open MPI underneath) of SIZE bytes of f32, REPEAT times after
a warm-up; rank 0 prints the median seconds."""
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "test", "lib"))
from grove_dist import Comm  # noqa: E402
from grove_testing import dltensor  # noqa: E402

lib = ctypes.CDLL(os.path.join(os.environ["GROVE_LIB"], "libgrove_rt.so"))
lib.grove_last_error.restype = ctypes.c_char_p
size, repeat = int(sys.argv[1]), int(sys.argv[2])
comm = Comm(lib, timeout=120)
x = np.ones(size // 4, np.float32)
keep = []
t = dltensor(x, keep)
lib.grove_comm_all_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_int]
times = []
for i in range(repeat + 1):
    comm.barrier()
    start = time.perf_counter()
    if lib.grove_comm_all_reduce(comm.handle, ctypes.byref(t), 0):
        raise RuntimeError(lib.grove_last_error().decode())
    if i:
        times.append(time.perf_counter() - start)
if comm.rank == 0:
    print(f"allreduce {size} {statistics.median(times):.6f}", flush=True)
comm.destroy()
