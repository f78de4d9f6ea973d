"""grove.trace: a Chrome trace of the calls made meanwhile."""
import contextlib
import os

from . import _core


@contextlib.contextmanager
def trace(path):
    """Records every entry call and runtime service (GEMM, convolution,
    collectives, tree schedules) in this process while the block runs, and
    writes them to `path` as a Chrome trace (JSON that Perfetto and
    chrome://tracing open; docs/traces.md). GROVE_TRACE=path in the
    environment traces a whole process instead."""
    _core.trace_start(os.fspath(path))
    try:
        yield path
    finally:
        _core.trace_stop()
