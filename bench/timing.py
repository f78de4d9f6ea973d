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


def write_perf_section(path, name, section):
    """Replaces the marked section `name` of docs/perf.md (from
    `<!-- name:` to `<!-- /name -->`) by `section`, or appends it."""
    import re
    from pathlib import Path
    perf = Path(path)
    text = perf.read_text()
    pattern = re.compile(r"<!-- %s:.*?<!-- /%s -->" % (re.escape(name),
                                                       re.escape(name)), re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) \
        else text.rstrip() + "\n\n" + section + "\n"
    perf.write_text(text)
