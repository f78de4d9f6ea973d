#!/usr/bin/env python3
"""Renders a Grove trace (grove.trace / GROVE_TRACE: Chrome's JSON) as an SVG
timeline: a row per thread and nesting depth, a box per span coloured by
its category (entry calls, services, collectives), named where it is wide
enough. Perfetto's UI does the same interactively; this draws it where no
browser can reach it (docs/traces.md).

    .venv/bin/python scripts/trace_timeline.py trace.json out.svg [--from-entry N]

--from-entry N starts the picture at the N-th entry call (0-based) and ends
it with that call, so one call fills the width.
"""
import argparse
import html
import json

COLOURS = {"entry": "#4e79a7", "service": "#f28e2b", "collective": "#59a14f",
           "loop": "#b07aa1"}
ROW, WIDTH, LEFT = 22, 1200, 60


def layout(events):
    """(event, row) pairs: per thread, a span one row below the spans that
    contain it."""
    rows, out, next_row = {}, [], 0
    for tid in sorted({e["tid"] for e in events}):
        stack = []
        mine = sorted((e for e in events if e["tid"] == tid),
                      key=lambda e: (e["ts"], -e["dur"]))
        depth_rows = {}
        for e in mine:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            depth = len(stack)
            if depth not in depth_rows:
                depth_rows[depth] = next_row
                next_row += 1
            out.append((e, depth_rows[depth]))
            stack.append(e)
        rows[tid] = depth_rows
    return out, next_row


def render(events, title):
    t0 = min(e["ts"] for e in events)
    t1 = max(e["ts"] + e["dur"] for e in events)
    scale = (WIDTH - LEFT - 10) / max(t1 - t0, 1e-9)
    placed, nrows = layout(events)
    height = 40 + nrows * ROW + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
             f'height="{height}" font-family="sans-serif" font-size="10">',
             f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
             f'<text x="{LEFT}" y="16" font-size="13">'
             f'{html.escape(title)}</text>']
    for e, row in placed:
        x = LEFT + (e["ts"] - t0) * scale
        w = max(e["dur"] * scale, 0.5)
        y = 30 + row * ROW
        colour = COLOURS.get(e["cat"], "#999999")
        label = e["name"].replace("grove_rt_", "")
        tip = html.escape(f"{e['name']} {e['dur']:.1f} us {e.get('args', '')}")
        parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" '
                     f'height="{ROW - 4}" fill="{colour}" stroke="white" '
                     f'stroke-width="0.3"><title>{tip}</title></rect>')
        if w > 6.5 * len(label):
            parts.append(f'<text x="{x + 2:.2f}" y="{y + 12}" fill="white">'
                         f'{html.escape(label)}</text>')
    # Time axis: ten ticks.
    axis_y = 40 + nrows * ROW
    for i in range(11):
        t = (t1 - t0) * i / 10
        x = LEFT + t * scale
        parts.append(f'<line x1="{x:.1f}" y1="{axis_y - 8}" x2="{x:.1f}" '
                     f'y2="{axis_y - 3}" stroke="black"/>')
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 8}" '
                     f'text-anchor="middle">{t / 1e3:.2f} ms</text>')
    x = LEFT
    for cat, colour in COLOURS.items():
        parts.append(f'<rect x="{x}" y="{axis_y + 14}" width="10" '
                     f'height="10" fill="{colour}"/><text x="{x + 14}" '
                     f'y="{axis_y + 23}">{cat}</text>')
        x += 90
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("svg")
    ap.add_argument("--from-entry", type=int, default=None)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    events = [e for e in json.load(open(a.trace))["traceEvents"]
              if e.get("ph") == "X"]
    if a.from_entry is not None:
        entries = sorted((e for e in events if e["cat"] == "entry"),
                         key=lambda e: e["ts"])
        call = entries[a.from_entry]
        end = call["ts"] + call["dur"]
        events = [e for e in events
                  if e["ts"] >= call["ts"] and e["ts"] + e["dur"] <= end]
    with open(a.svg, "w") as f:
        f.write(render(events, a.title or a.trace))


if __name__ == "__main__":
    main()
