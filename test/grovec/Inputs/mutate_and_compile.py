"""Feeds grovec mutated copies of a model and checks it fails cleanly.

usage: mutate_and_compile.py MODEL.mlir WORKDIR [--count N] [--seed S]
                             [--jobs J] [--timeout SEC]

Each mutation (truncation, byte flip, deleted line or span, swapped tokens,
duplicated line, a number replaced by an odd size) is compiled with `grovec MUT.mlir -o OUT`. Every run must end on its
own within the timeout with exit status 0, 1 or 2 (never a signal); a
failure must print an error and leave OUT without files, a success must leave
the library and the header; no `.tmp-` file may be left in OUT either way.
Prints the counts per exit status; exits 1 listing the offending mutations.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys

TOKEN = re.compile(rb"[%@]?[A-Za-z_][A-Za-z0-9_.]*|\d+|[^\sA-Za-z0-9_]")
NUMBER = re.compile(rb"\d+")
# Sizes that tend to find overflow and empty-tensor bugs.
ODD_NUMBERS = [b"0", b"1", b"3", b"-1", b"65536", b"2147483648",
               b"4294967297", b"9223372036854775807", b"99999999999999999999"]


def mutations(src, count, rng):
    lines = src.split(b"\n")
    kinds = ["truncate", "flip", "delete_line", "swap_tokens", "dup_line",
             "delete_span", "number"]
    for i in range(count):
        kind = kinds[i % len(kinds)]
        if kind == "truncate":
            cut = rng.randrange(len(src))
            yield kind, src[:cut]
        elif kind == "flip":
            b = bytearray(src)
            for _ in range(rng.randint(1, 3)):
                pos = rng.randrange(len(b))
                b[pos] = rng.choice([rng.randrange(256),
                                     b[pos] ^ (1 << rng.randrange(8))])
            yield kind, bytes(b)
        elif kind == "delete_line":
            j = rng.randrange(len(lines))
            yield kind, b"\n".join(lines[:j] + lines[j + 1:])
        elif kind == "dup_line":
            j = rng.randrange(len(lines))
            yield kind, b"\n".join(lines[:j + 1] + lines[j:])
        elif kind == "delete_span":
            a = rng.randrange(len(src))
            yield kind, src[:a] + src[a + rng.randint(1, 40):]
        elif kind == "number":
            a, b = rng.choice([m.span() for m in NUMBER.finditer(src)])
            yield kind, src[:a] + rng.choice(ODD_NUMBERS) + src[b:]
        else:
            toks = [m.span() for m in TOKEN.finditer(src)]
            (a0, a1), (b0, b1) = sorted(rng.sample(toks, 2))
            yield kind, (src[:a0] + src[b0:b1] + src[a1:b0] + src[a0:a1] +
                         src[b1:])


def run_one(grovec, workdir, index, kind, text, timeout):
    path = os.path.join(workdir, "mut%03d.mlir" % index)
    out = os.path.join(workdir, "out%03d" % index)
    with open(path, "wb") as f:
        f.write(text)
    shutil.rmtree(out, ignore_errors=True)
    try:
        p = subprocess.run([grovec, path, "-o", out], capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return index, kind, "hang", ["no exit within %ss" % timeout]
    problems = []
    rc = p.returncode
    if rc not in (0, 1, 2):
        problems.append("exit status %d" % rc)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    if any(".tmp-" in f for f in files):
        problems.append("temporary files left: %s" % files)
    if rc == 0:
        # The module's sym_name may have been mutated, so match by suffix.
        if not (any(f.startswith("lib") and f.endswith(".a") for f in files)
                and any(f.endswith(".h") for f in files)):
            problems.append("success without library and header: %s" % files)
    elif rc in (1, 2):
        if b"error" not in p.stderr:
            problems.append("failed without an error message")
        if files:
            problems.append("failed but left outputs: %s" % files)
    if problems:
        problems.append("stderr: %s" % p.stderr.decode(errors="replace")[-500:])
    return index, kind, rc, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--grovec", default=shutil.which("grovec") or "grovec")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()

    with open(args.model, "rb") as f:
        src = f.read()
    os.makedirs(args.workdir, exist_ok=True)
    rng = random.Random(args.seed)
    muts = list(mutations(src, args.count, rng))
    counts = {}
    bad = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_one, args.grovec, args.workdir, i, kind, text,
                            args.timeout)
                for i, (kind, text) in enumerate(muts)]
        for fut in futs:
            index, kind, rc, problems = fut.result()
            counts[rc] = counts.get(rc, 0) + 1
            if problems:
                bad.append((index, kind, problems))
            else:
                # Keep the work directory small; offenders stay for triage.
                os.remove(os.path.join(args.workdir, "mut%03d.mlir" % index))
                shutil.rmtree(os.path.join(args.workdir, "out%03d" % index),
                              ignore_errors=True)

    print("mutations: %d" % len(muts))
    for rc in sorted(counts, key=str):
        print("exit %s: %d" % (rc, counts[rc]))
    for index, kind, problems in bad:
        print("BAD mut%03d.mlir (%s): %s" % (index, kind, "; ".join(problems)))
    print("bad: %d" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
