#!/usr/bin/env python3
"""Split attention (ResNeSt) on the host: fused vs unfused vs PyTorch eager.

    .venv/bin/python bench/split_attention.py      # ~2 min; prints a table and
                                                   # writes its section of docs/perf.md

For every block shape of ResNeSt-50 at 224x224 (the part of SplAtConv2d after
the grouped conv + BN + ReLU, on the same random U and weights), at batch 1
and 16, one process, interleaved rounds:
  * Grove fused    grove.split_attention (what grovec compiles after
                   grove-fuse-split-attention): two passes over U.
  * Grove unfused  the frontend's primitive ops compiled with
                   --fuse-split-attention=false.
  * PyTorch eager  the same ops in torch 1.13 (split, sum, adaptive_avg_pool2d,
                   1x1 grouped conv, batch_norm, relu, rSoftMax, products, sum),
                   inference_mode, on 2 threads (its best configuration here,
                   and the threads Grove's loops and GEMMs use) and on 1.
Both Grove variants are compiled with --cpu=native, as bench/resnest.py does.
The process runs with the GLIBC_TUNABLES of bench/run.py and
OPENBLAS_NUM_THREADS=1 (it re-executes itself to set them).
Each result is first checked against PyTorch (rtol 1e-4). Reported: median
of per-round medians; ratios are PyTorch time / Grove time (> 1: Grove
faster); and, per shape, the bytes any two-pass implementation moves over
Grove's time, next to the rate of Grove's relu(U) (one stream of U's size)
in the same run.
"""
import os
import re
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "lib"))
sys.path.insert(0, str(ROOT / "models" / "resnest"))
from reference import split_attention  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from timing import sample  # noqa: E402

GROVEC_FLAGS = ["--cpu=native"]

# (layer, channels C, H = W, inter I), radix 2, cardinality 1 (ResNeSt-50).
SHAPES = [("layer1", 64, 56, 32), ("layer2.0", 128, 56, 64),
          ("layer2", 128, 28, 64), ("layer3.0", 256, 28, 128),
          ("layer3", 256, 14, 128), ("layer4.0", 512, 14, 256),
          ("layer4", 512, 7, 256)]
R, K = 2, 1


def module(name, c, hw, i, fused):
    # Reuse the split-attention test's generators (one source of the forms).
    src = (ROOT / "test" / "Integration" / "split_attention.py").read_text()
    ns = {}
    exec(src.split("funcs = []")[0].replace("H, W = 6, 5", f"H, W = {hw}, {hw}"),
         ns)
    return (ns["fused"] if fused else ns["unfused"])(name, R, K, c, i)


# The arguments after U of the fused and unfused functions, in order, named
# as reference.split_attention reads them.
PARAMS = ("sa.fc1.weight", "sa.fc1.bias", "sa.bn1.weight", "sa.bn1.bias",
          "sa.bn1.running_mean", "sa.bn1.running_var", "sa.fc2.weight",
          "sa.fc2.bias")


def random_params(g, c, i):
    """f32 weights of one block's attention (C channels, I inter), by name."""
    p = {"sa.fc1.weight": g.standard_normal((i, c // K, 1, 1)) / np.sqrt(c),
         "sa.fc1.bias": g.standard_normal(i),
         "sa.bn1.weight": g.uniform(0.5, 1, i),
         "sa.bn1.bias": g.standard_normal(i) * 0.1,
         "sa.bn1.running_mean": g.standard_normal(i) * 0.1,
         "sa.bn1.running_var": g.uniform(0.5, 1.5, i),
         "sa.fc2.weight": g.standard_normal((c * R, i // K, 1, 1)) / np.sqrt(i),
         "sa.fc2.bias": g.standard_normal(c * R) * 0.1}
    return {key: v.astype(np.float32) for key, v in p.items()}


def torch_attention(u, p):
    """PyTorch eager's same ops on U (torch tensors, any device)."""
    return split_attention(p, "sa", u, u.shape[1] // R, R, K)


def source(shapes):
    """fused{n}, unfused{n} and stream{n} for each of `shapes`."""
    funcs = []
    for n, (_, c, hw, i) in enumerate(shapes):
        funcs.append(module(f"fused{n}", c, hw, i, True))
        funcs.append(module(f"unfused{n}", c, hw, i, False))
        funcs.append(stream(f"stream{n}", c, hw))
    return "module {" + "".join(funcs) + "\n}"


def stream(name, c, hw):
    """relu(U): reads U and writes as much, through the same entry point,
    threads and allocation as the fused op; its rate is what Grove's loops
    stream at U's size on this machine."""
    t = f"tensor<?x{c * R}x{hw}x{hw}xf32>"
    return (f"\n  func.func @{name}(%u: {t}) -> {t} {{\n"
            f"    %0 = grove.relu %u : {t}\n    return %0 : {t}\n  }}")


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="two block shapes, docs/perf.md untouched")
    ap.add_argument("--emit-mlir", metavar="FILE",
                    help="write the functions of every block shape to FILE "
                    "and exit (scripts/gpu-check.sh compiles them for CUDA)")
    opts = ap.parse_args()
    if opts.emit_mlir:
        Path(opts.emit_mlir).write_text(source(SHAPES))
        return
    # Without these glibc maps and unmaps big buffers on every call and
    # OpenBLAS's threads fight OpenMP's.
    sys.path.insert(0, str(ROOT / "bench"))
    from run import GLIBC_TUNABLES  # bench/run.py: one definition
    env = {"GLIBC_TUNABLES": GLIBC_TUNABLES, "OPENBLAS_NUM_THREADS": "1"}
    if any(os.environ.get(k) != v for k, v in env.items()):
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  {**os.environ, **env})
    os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
    os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
    from grove_testing import Model
    shapes = [SHAPES[0], SHAPES[-1]] if opts.quick else SHAPES
    g = np.random.default_rng(0)
    text = source(shapes)
    fused = Model(text, name="sa_fused", grovec_flags=GROVEC_FLAGS)
    plain = Model(text, name="sa_plain",
                  grovec_flags=GROVEC_FLAGS + ["--fuse-split-attention=false"])
    rows = []
    for n, (layer, c, hw, i) in enumerate(shapes):
        for batch in (1, 16):
            u = np.maximum(g.standard_normal((batch, c * R, hw, hw)),
                           0).astype(np.float32)
            p = random_params(g, c, i)
            args = [p[key] for key in PARAMS]
            tp = {key: torch.from_numpy(v) for key, v in p.items()}
            tu = torch.from_numpy(u)
            with torch.inference_mode():
                ref = torch_attention(tu, tp).numpy()
            for m, name in ((fused, f"fused{n}"), (plain, f"unfused{n}")):
                (got,) = m.call(name, u, *args)
                err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
                assert err < 1e-4, f"{m.name} {layer} b={batch}: rel err {err}"
            samples = {"fused": [], "unfused": [], "torch1": [], "torch2": [],
                       "stream": []}
            run_fused = fused.bind(f"fused{n}", u, *args)
            run_plain = plain.bind(f"unfused{n}", u, *args)
            run_stream = fused.bind(f"stream{n}", u)
            for _ in range(5):  # rounds, variants interleaved
                samples["fused"].append(sample(run_fused))
                samples["unfused"].append(sample(run_plain))
                samples["stream"].append(sample(run_stream))
                for threads in (1, 2):
                    torch.set_num_threads(threads)
                    with torch.inference_mode():
                        samples[f"torch{threads}"].append(
                            sample(lambda: torch_attention(tu, tp)))
            med = {key: statistics.median(v) * 1e6 for key, v in samples.items()}
            # What any two-pass implementation must move: U twice, the
            # result once, the FC weights once.
            med["bytes"] = 4 * (2 * u.size + u.size // R
                                + p["sa.fc1.weight"].size
                                + p["sa.fc2.weight"].size)
            med["stream_gbs"] = 2 * u.nbytes / med["stream"] / 1e3
            rows.append((layer, c, hw, batch, med))
            print(f"{layer:9s} C={c:3d} {hw:2d}x{hw:<2d} b={batch:2d}: "
                  f"fused {med['fused']:9.1f} us  unfused {med['unfused']:9.1f}"
                  f" us  torch(1t) {med['torch1']:9.1f} us  torch(2t) "
                  f"{med['torch2']:9.1f} us  Grove "
                  f"{med['bytes'] / med['fused'] / 1e3:5.1f} GB/s, relu(U) "
                  f"{med['stream_gbs']:5.1f} GB/s", flush=True)
    if not opts.quick:
        write(rows)


def write(rows):
    lines = [
        "<!-- split-attention: written by bench/split_attention.py -->",
        "## Split attention (ResNeSt-50 block shapes), host",
        "",
        f"{datetime_now()}, {os.cpu_count()} cores; radix 2, cardinality 1; "
        "the attention part of SplAtConv2d on the same U and weights; median "
        "per-call time (µs; Grove through `grove_invoke`, which copies nothing "
        "in and allocates the output, freed unread like PyTorch's); Grove with "
        "--cpu=native on its 2-thread OpenMP team. Ratios: PyTorch eager time "
        "/ Grove time.",
        "",
        "Memory columns: what any two-pass implementation moves (U twice, the "
        "result once, the FC weights once) divided by Grove's time, and, for "
        "scale, the rate of Grove's `relu(U)` in the same run (reads U, writes "
        "as much: one stream through the same entry point, threads and output "
        "allocation). Where the fused op moves its bytes as fast as relu(U) "
        "moves its own, it is bound by memory traffic, not arithmetic.",
        "",
        "What bounds the ratio to PyTorch there: with H = B·C·H·W floats (half "
        "of U, the size of the result), PyTorch eager's ops read 9H and write "
        "6H (Python's `sum` of the splits starts from 0: 0 + s0, + s1; the "
        "pool; a0·s0, a1·s1 and their `sum` again from 0), Grove's two passes "
        "read 4H and write H. Where both stream from memory the ratio is "
        "15H / 5H = 3× (3.5× counting the read that brings in every written "
        "line), so no two-pass implementation reaches the issue's ≥ 5× on "
        "the cells where Grove GB/s ≈ relu(U) GB/s; ≥ 5× comes where U stays "
        "in cache and PyTorch's per-op costs dominate. layer4 at batch 16 is "
        "bound by its FCs instead (12.6 MFLOP, 1.5 MB of weights): from "
        "batch 2 on they are oneDNN GEMMs (`split-attention-gemm`), and "
        "`perf` puts half of the op's time in them (about 75 GFLOP/s on "
        "these skinny shapes, against 210 on 1024³). At batch 1, layer4's "
        "and layer4.0's FCs are matrix-vector products over the same 1.5 MB "
        "of weights, read from L2 at about 90 GB/s per core (a C loop nest "
        "with four rows in registers reads 10-20% faster): they take half "
        "of those cells' time on both threads. Tried and dropped: running "
        "the op over tiles of the batch whose U fits in the L2s (2 to 8 "
        "MiB), so that the second pass reads U from cache; in A/B runs in "
        "one process it was no faster on the 56×56 and 28×28 blocks at "
        "batch 16, and up to 30% slower with the smallest.",
        "",
        "| block | C | H×W | batch | Grove fused | Grove unfused | PyTorch 1 thread "
        "| PyTorch 2 threads | fused vs unfused | fused vs PyTorch (1 t) | "
        "fused vs PyTorch (2 t, same threads) | Grove GB/s | relu(U) GB/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
        "| --- | --- |"]
    for layer, c, hw, batch, m in rows:
        lines.append(
            f"| {layer} | {c} | {hw}×{hw} | {batch} | {m['fused']:.1f} | "
            f"{m['unfused']:.1f} | {m['torch1']:.1f} | {m['torch2']:.1f} | "
            f"{m['unfused'] / m['fused']:.2f}× | {m['torch1'] / m['fused']:.2f}× | "
            f"{m['torch2'] / m['fused']:.2f}× | "
            f"{m['bytes'] / m['fused'] / 1e3:.1f} | {m['stream_gbs']:.1f} |")
    lines.append("<!-- /split-attention -->")
    section = "\n".join(lines)
    print("\n" + section)
    perf = ROOT / "docs" / "perf.md"
    text = perf.read_text()
    pattern = re.compile(r"<!-- split-attention:.*?<!-- /split-attention -->",
                         re.S)
    text = pattern.sub(section, text) if pattern.search(text) else \
        text.rstrip() + "\n\n" + section + "\n"
    perf.write_text(text)


def datetime_now():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d")


if __name__ == "__main__":
    main()
