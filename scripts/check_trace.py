#!/usr/bin/env python3
"""Checks a Grove trace (Chrome trace JSON) and prints where its time went.

    check_trace.py trace.json [--require CATEGORY ...] [--top N]

Fails (exit 1) when the file is not a trace, a span has a negative
duration, a required category has no span, or a span on a GPU track lies
outside every entry call (GPU work is timed by events and placed on the
host clock: it must fall inside the call that queued it, give or take
`--slack-us`). Prints the spans' count and total time by category and the
longest names: the per-kernel profile of a GPU run (scripts/gpu-check.sh).
"""
import argparse
import bisect
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--slack-us", type=float, default=50.0)
    a = ap.parse_args()
    try:
        with open(a.trace) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"check_trace: {a.trace}: not a trace ({e})")
    spans = [e for e in events if e.get("ph") == "X"]
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    bad = [e for e in spans if e["dur"] < 0]
    if bad:
        sys.exit(f"check_trace: {len(bad)} spans end before they start")
    by_cat = collections.defaultdict(lambda: [0, 0.0])
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for e in spans:
        by_cat[e["cat"]][0] += 1
        by_cat[e["cat"]][1] += e["dur"]
        by_name[(e["cat"], e["name"])][0] += 1
        by_name[(e["cat"], e["name"])][1] += e["dur"]
    print(f"{a.trace}: {len(spans)} spans; tracks: "
          f"{', '.join(sorted(tracks.values())) or 'threads only'}")
    for cat, (n, us) in sorted(by_cat.items(), key=lambda kv: -kv[1][1]):
        print(f"  {cat:12} {n:7} spans {us / 1e3:10.3f} ms")
    print(f"  longest in total (top {a.top}):")
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:a.top]
    for (cat, name), (n, us) in top:
        print(f"    {us / 1e3:9.3f} ms {n:6}x  {cat:12} {name}")
    missing = [c for c in a.require if c not in by_cat]
    if missing:
        sys.exit(f"check_trace: no spans of {', '.join(missing)}")
    calls = sorted((e["ts"], e["ts"] + e["dur"]) for e in spans
                   if e["cat"] == "entry")
    starts = [s for s, _ in calls]
    outside = 0
    for e in spans:
        if e["tid"] not in tracks:
            continue
        # The last call that began before the span (calls do not overlap).
        i = bisect.bisect_right(starts, e["ts"] + a.slack_us) - 1
        if i < 0 or e["ts"] + e["dur"] > calls[i][1] + a.slack_us:
            outside += 1
    if outside:
        sys.exit(f"check_trace: {outside} GPU spans outside every entry call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
