"""What the Python benchmarks share: per-call timing, the set-up that
points the tests' helpers at build/, and the writing of docs/perf.md."""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_args(doc, extra=None):
    """The benchmark's options: --quick, and those `extra(parser)` adds."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    if extra:
        extra(ap)
    return ap.parse_args()


def use_build(*paths):
    """Points the tests' helpers (test/lib) at build/'s grovec and runtime,
    unless the environment says otherwise, and puts test/lib and `paths`
    (relative to the repository) on the import path."""
    os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
    os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
    for path in ("test/lib",) + paths:
        sys.path.insert(0, str(ROOT / path))


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
