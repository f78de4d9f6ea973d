"""The per-call timing the Python benchmarks share."""
import statistics
import time


def sample(fn, seconds=0.25):
    """The median wall time of `fn` over about `seconds`, after one warm-up
    call (at least 3 calls)."""
    fn()
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 3:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
