#!/usr/bin/env python3
"""Attention alone on the host: grove.attention (tiled) vs decomposed.

    .venv/bin/python bench/attention.py      # ~3 min; prints a table and
                                             # writes its section of docs/perf.md

Scaled dot-product attention, forward, f32, batch 1, 4 heads of 64, with a
[B, 1, 1, S] padding mask, at sequence 128, 512 and 2048, on the same random
inputs:
  * Grove tiled       one grove.attention, which grove-tile-attention runs
                      over tiles of 128 keys with an online softmax;
  * Grove decomposed  the same in primitive grove ops (all the scores, a
                      softmax, a product), compiled beside it;
  * PyTorch eager     the decomposed form in torch 1.13 (which has no
                      scaled_dot_product_attention), inference_mode, on 2
                      threads;
  * JAX jit           the decomposed form in jax.numpy (q @ k^T * scale +
                      mask, jax.nn.softmax, @ v) under jax.jit, inputs
                      already on the device, block_until_ready per call; XLA's
                      CPU backend (both cores) rewrites it into oneDNN
                      matmul (scale and mask fused), softmax, matmul (the
                      custom calls are read from the compiled HLO and
                      reported). jax.nn.dot_product_attention, where the
                      installed JAX has it (0.4.31 on), is not measured: the
                      report says so.
Each result is first checked against PyTorch in float64 (rtol 1e-4; the
max abs errors are printed and reported). Time:
median of per-round medians, variants interleaved. Peak memory: each
variant runs alone in a fresh process (this script with --measure), which
resets its peak resident set (/proc/self/clear_refs) after loading inputs,
code and libraries, and reports the peak over three calls minus the
resident set before them: what the calls added at their peak, first-call
costs included (Grove's thread team and buffer cache, a few MiB whatever
the length), so the growth with the sequence is what compares. JAX: the
executable is compiled ahead (jit(...).lower(...).compile()) and the inputs
placed before the reset; XLA on the CPU keeps no preallocated pool (that is
GPU-only) but mallocs each call's temporaries (its buffer plan, reported as
XLA temp) and output, which glibc keeps in its heap or maps afresh (above
the 32 MiB mmap threshold), so its number is what one call needs at once
plus what malloc kept between calls, like the others'.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))
from timing import sample, write_perf_section  # noqa: E402

H, D, LENGTHS = 4, 64, (128, 512, 2048)
GROVEC_FLAGS = ["--cpu=native"]


def source(s):
    t = f"tensor<1x{H}x{s}x{D}xf32>"
    m = f"tensor<1x1x1x{s}xf32>"
    f3 = f"tensor<{H}x{s}x{D}xf32>"
    sc = f"tensor<{H}x{s}x{s}xf32>"
    return f"""
module @attn{s} {{
  func.func @tiled(%q: {t}, %k: {t}, %v: {t}, %m: {m}) -> {t} {{
    %o = grove.attention %q, %k, %v mask(%m : {m}) : ({t}, {t}, {t}) -> {t}
    return %o : {t}
  }}
  func.func @decomposed(%q: {t}, %k: {t}, %v: {t}, %m: {m}) -> {t} {{
    %q3 = grove.reshape %q : {t} -> {f3}
    %k3 = grove.reshape %k : {t} -> {f3}
    %v3 = grove.reshape %v : {t} -> {f3}
    %s = grove.matmul %q3, %k3 {{transpose_rhs}} : ({f3}, {f3}) -> {sc}
    %c = grove.constant dense<0.125> : tensor<f32>
    %ss = grove.mul %s, %c : ({sc}, tensor<f32>) -> {sc}
    %s4 = grove.reshape %ss : {sc} -> tensor<1x{H}x{s}x{s}xf32>
    %sm = grove.add %s4, %m : (tensor<1x{H}x{s}x{s}xf32>, {m}) -> tensor<1x{H}x{s}x{s}xf32>
    %p = grove.softmax %sm {{axis = 3 : i64}} : tensor<1x{H}x{s}x{s}xf32>
    %p3 = grove.reshape %p : tensor<1x{H}x{s}x{s}xf32> -> {sc}
    %o3 = grove.matmul %p3, %v3 : ({sc}, {f3}) -> {f3}
    %o = grove.reshape %o3 : {f3} -> {t}
    return %o : {t}
  }}
}}
"""


def inputs(s, seed=0):
    g = np.random.default_rng(seed)
    q, k, v = (g.standard_normal((1, H, s, D)).astype(np.float32)
               for _ in range(3))
    m = np.zeros((1, 1, 1, s), np.float32)
    m[..., s - s // 8:] = -1e4
    return q, k, v, m


def torch_attention(q, k, v, m):
    s = q @ k.transpose(-1, -2) * 0.125 + m
    return torch.softmax(s, -1) @ v


def jax_attention(q, k, v, m):
    import jax
    import jax.numpy as jnp
    s = q @ jnp.swapaxes(k, -1, -2) * 0.125 + m
    return jax.nn.softmax(s, axis=-1) @ v


def jax_compiled(args):
    """The jitted JAX attention compiled ahead for `args` (numpy), the
    inputs placed on the device, and what XLA made of it."""
    import jax
    jargs = [jax.device_put(a) for a in args]
    fn = jax.jit(jax_attention)
    compiled = fn.lower(*jargs).compile()
    hlo = compiled.as_text()
    calls = sorted(set(re.findall(r'custom_call_target="([^"]+)"', hlo)))
    temp = compiled.memory_analysis().temp_size_in_bytes / 2**20
    return fn, compiled, jargs, calls, temp


def status_kib(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def reset_peak():
    """Resets the peak resident set (VmHWM) to the current one (Linux)."""
    Path("/proc/self/clear_refs").write_text("5")
    return status_kib("VmRSS")


def measure(variant, s):
    """Runs one variant alone; prints the peak RSS the calls added (KiB)."""
    args = inputs(s)
    if variant == "torch":
        torch.set_num_threads(2)
        targs = [torch.from_numpy(a) for a in args]
        with torch.inference_mode():
            before = reset_peak()
            for _ in range(3):
                torch_attention(*targs)
    elif variant == "jax":
        _, compiled, jargs, _, _ = jax_compiled(args)
        before = reset_peak()
        for _ in range(3):
            compiled(*jargs).block_until_ready()
    else:
        from grove_testing import Model
        model = Model(source(s), name=f"attn{s}", grovec_flags=GROVEC_FLAGS)
        run = model.bind(variant, *args)
        before = reset_peak()
        for _ in range(3):
            run()
    print(status_kib("VmHWM") - before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="sequence 128 and 512 only, docs/perf.md untouched")
    ap.add_argument("--measure", nargs=2, metavar=("VARIANT", "S"),
                    help=argparse.SUPPRESS)
    opts = ap.parse_args()
    from run import GLIBC_TUNABLES  # bench/run.py: one definition
    env = {"GLIBC_TUNABLES": GLIBC_TUNABLES, "OPENBLAS_NUM_THREADS": "1"}
    if any(os.environ.get(k) != v for k, v in env.items()):
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  {**os.environ, **env})
    os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
    os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
    if opts.measure:
        measure(opts.measure[0], int(opts.measure[1]))
        return
    from grove_testing import Model
    import jax
    lengths = LENGTHS[:2] if opts.quick else LENGTHS
    torch.set_num_threads(2)
    has_dpa = hasattr(jax.nn, "dot_product_attention")
    if has_dpa:
        print(f"note: jax {jax.__version__} has jax.nn.dot_product_attention;"
              " it is not measured here", flush=True)
    rows = []
    xla = {}
    for s in lengths:
        model = Model(source(s), name=f"attn{s}", grovec_flags=GROVEC_FLAGS)
        args = inputs(s)
        t64 = [torch.from_numpy(a).double() for a in args]
        want = torch_attention(*t64).numpy()
        targs = [torch.from_numpy(a) for a in args]
        jfn, _, jargs, calls, temp = jax_compiled(args)
        xla[s] = (calls, temp)
        got = {v: model.call(v, *args)[0] for v in ("tiled", "decomposed")}
        with torch.inference_mode():
            got["torch"] = torch_attention(*targs).numpy()
        got["jax"] = np.asarray(jfn(*jargs))
        errs = {}
        for variant, out in got.items():
            errs[variant] = np.abs(out - want).max()
            rel = errs[variant] / np.abs(want).max()
            assert rel < 1e-4, f"{variant} S={s}: relative error {rel}"
        print(f"S={s:5d}: max abs error vs float64: " + ", ".join(
            f"{v} {e:.1e}" for v, e in errs.items())
            + f"; XLA: {' + '.join(calls)}, temp {temp:.1f} MiB", flush=True)
        runs = {v: model.bind(v, *args) for v in ("tiled", "decomposed")}
        samples = {"tiled": [], "decomposed": [], "torch": [], "jax": []}
        for _ in range(5):
            for v, run in runs.items():
                samples[v].append(sample(run))
            with torch.inference_mode():
                samples["torch"].append(
                    sample(lambda: torch_attention(*targs)))
            samples["jax"].append(
                sample(lambda: jfn(*jargs).block_until_ready()))
        med = {v: statistics.median(x) * 1e3 for v, x in samples.items()}
        mem = {}
        for v in ("tiled", "decomposed", "torch", "jax"):
            out = subprocess.run(
                [sys.executable, __file__, "--measure", v, str(s)],
                capture_output=True, text=True, check=True).stdout
            mem[v] = int(out.split()[-1]) / 1024
        rows.append((s, med, mem, errs))
        print(f"S={s:5d}: " + "  ".join(
            f"{v} {med[v]:8.3f} ms {mem[v]:7.1f} MiB" for v in med),
            flush=True)
    if not opts.quick:
        write(rows, xla, has_dpa)


def write(rows, xla, has_dpa):
    import datetime
    import jax
    import jaxlib
    when = datetime.datetime.now().strftime("%Y-%m-%d")
    calls = sorted({c for cs, _ in xla.values() for c in cs})
    fused = (" (scale and mask fused into the first matmul)"
             if "__onednn$matmul" in calls else "")
    calls = " + ".join(f"`{c}`" for c in calls) or "its own kernels"
    if has_dpa:
        dpa = (f"jax {jax.__version__} has `jax.nn.dot_product_attention`, "
               "not measured here.")
    else:
        dpa = (f"`jax.nn.dot_product_attention` is not in jax "
               f"{jax.__version__} (it came with 0.4.31), so there is no "
               "second JAX row.")
    torch_version = torch.__version__.split("+")[0]
    lines = [
        "<!-- attention: written by bench/attention.py -->",
        "## Attention alone (forward), host",
        "",
        f"{when}, {os.cpu_count()} cores; f32, batch 1, 4 heads of 64, a "
        "padding mask; median per-call time (ms, Grove through "
        "`grove_invoke`), and the peak resident memory the calls added (MiB, "
        "each variant alone in a fresh process, first-call costs of a few MiB "
        "included: the growth with the sequence is what compares). Grove "
        "tiled: "
        "`grove.attention` over tiles of 128 keys (online softmax); Grove "
        "decomposed: the same in primitive ops (every score stored); PyTorch "
        f"{torch_version} eager: the decomposed form (it has no fused "
        "attention), 2 threads; JAX: "
        f"jax {jax.__version__} (jaxlib {jaxlib.__version__}), `jax.jit` of "
        "the same decomposed form in jax.numpy (`q @ kᵀ · scale + mask`, "
        "`jax.nn.softmax`, `@ v`), inputs already on the device, "
        "`block_until_ready` per call; XLA's CPU backend runs it on both "
        f"cores as {calls}{fused}. "
        f"{dpa} JAX's memory: the executable compiled ahead and the inputs "
        "placed before the peak is reset; on the CPU XLA keeps no "
        "preallocated pool (that is GPU-only) but mallocs each call's "
        "temporaries (XLA temp: its buffer plan, the scores and the "
        "probabilities) and output, so its number, like the others', is what "
        "a call needs at once plus what malloc kept from earlier calls. "
        "Every output is checked against PyTorch in float64 (relative error "
        "under 1e-4; max abs errors below). "
        "Command: `.venv/bin/python bench/attention.py`.",
        "",
        "| sequence | tiled ms | decomposed ms | torch ms | jax ms | "
        "tiled MiB | decomposed MiB | torch MiB | jax MiB | XLA temp MiB | "
        "torch / tiled | jax / tiled |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
        "---: | ---: | ---: |",
    ]
    for s, med, mem, _ in rows:
        lines.append(
            f"| {s} | {med['tiled']:.3f} | {med['decomposed']:.3f} | "
            f"{med['torch']:.3f} | {med['jax']:.3f} | {mem['tiled']:.1f} | "
            f"{mem['decomposed']:.1f} | {mem['torch']:.1f} | "
            f"{mem['jax']:.1f} | {xla[s][1]:.1f} | "
            f"{med['torch'] / med['tiled']:.2f} | "
            f"{med['jax'] / med['tiled']:.2f} |")
    lines.append("")
    lines.append("Max abs error against PyTorch float64: " + "; ".join(
        f"S={s}: " + ", ".join(f"{v} {e:.1e}" for v, e in errs.items())
        for s, _, _, errs in rows) + ".")
    lines.append("")
    lines.append("<!-- /attention -->")
    write_perf_section(ROOT / "docs" / "perf.md", "attention",
                       "\n".join(lines))

if __name__ == "__main__":
    main()
