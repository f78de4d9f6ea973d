#!/usr/bin/env python3
"""LANS at a large batch on BERT-tiny masked-LM pretraining.

    .venv/bin/python bench/lans_bert.py          # from scratch ~12-15 min on 2 idle cores
                                                 # (25+ busy); prints the table, writes its
                                                 # section of docs/perf.md
    .venv/bin/python bench/lans_bert.py --quick  # ~1-2 min smoke run, docs untouched

The claim tested (Zheng et al., "Accelerated Large Batch Optimization of
BERT Pretraining in 54 minutes"): with LANS, BERT pretraining at a batch K
times larger reaches the small-batch loss in about 1/K of the small-batch
steps, where LAMB and AdamW fall short. Every run pretrains
models/bert/generate.py's BERT-tiny (2 layers, hidden 128, 2 heads, post-LN,
sequence 128, vocabulary 8,192) from the same initial weights
(generate.init, seed 0) with its compiled train_step (the MLM loss and its
gradient, one global gradient clip at 1.0, BERT's decay groups: weight decay
0.01 on weight matrices and embeddings, none on biases and LayerNorm, a
linear warm-up over the first WARMUP_FRACTION of the steps then a linear
decay to 0, grove.lr_schedule polynomial) on the same stream of sequences:
SEQUENCES rows of 128 tokens ([CLS] 126 tokens [SEP]) of build/data/bert's
train split, a new window offset, shuffle and BERT masking (15%, 80/10/10,
models/bert/reference.masking) each epoch, drawn once with a fixed seed, so
every run sees the same tokens and masks in the same order (the large batch
takes K consecutive small batches at a time: equal epochs, 1/K the steps).

  * small batch   SMALL = 8 sequences, AdamW (BERT's Adam: decoupled
                  decay), each rate of a grid;
  * large batch   LARGE = 16 x 8 = 128 sequences: LANS, LAMB and AdamW, each
                  rate of a grid.

The grid rule: a grid whose best rate is at its edge is extended by one more
half-decade step beyond that edge, repeatedly, at most MAX_EXTENSIONS = 2
extensions; automatic, the same for every grid (the batch-8 one included).
The original rates are always run; results.json and the table mark the rates
that came from extensions.

Reuse: the runs of the last full run's results.json (in --out) are reused
when its configuration (sequences, evaluation, seeds, batches, warm-up, the
data it drew) is this one's; before the first new run, one saved run (the
grid's best, the one the new rate competes with) is run again and its
held-out curve must match the saved one within REUSE_TOLERANCE, or every
saved run is discarded and all are run again (the compiler may have changed
since). --fresh runs everything.

The MLM loss is evaluated on a fixed held-out set (the first EVAL_ROWS rows
of the valid split, masked once with a fixed seed) at every 1/EVAL_POINTS of
each run. The target is the final held-out loss of the best small-batch run;
for each run the table gives its final held-out loss and the first
evaluation step at which it was at or below the target ("not reached"
otherwise). A large-batch run that reaches the target within its own steps
reached it in at most 1/16 of the small-batch steps. Rates are chosen from
the grids stated below and in the report (fixed before the run, then
extended by the grid rule), on the same held-out set (an upper bound for
every optimizer alike).

Options: --quick (512 sequences, the middle rate of each grid and no
extensions, 4 evaluations; nothing reused, results-quick.json; docs
untouched), --fresh, --no-write, --sequences N, --out DIR (the compiled
libraries, cached by source and compiler, the last run's results.json and
the one before it, results-prev.json; default build-bench/lans_bert),
--report JSON (the report again from a results.json, without training).
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SEQ = 128
SMALL, LARGE = 8, 128
SEQUENCES = 6144            # per run: 768 small steps, 48 large steps
WARMUP_FRACTION = 0.1
EVAL_ROWS = 128             # held-out rows (~2,400 masked tokens)
EVAL_POINTS = 16
DATA_SEED, EVAL_SEED, INIT_SEED = 0, 1234, 0
# The rates, fixed before the run, in half-decades:
#  * AdamW at batch 8: around 1e-3 (BERT's 1e-4 is for BERT-base at batch
#    256; a 2-layer model trained for under 1,000 steps takes a larger rate);
#  * AdamW at batch 128: the small-batch grid times ~sqrt(16) = 4 (the
#    square-root scaling usual for Adam), rounded to the same half-decades;
#  * LAMB and LANS: the rate is each layer's step relative to its norm (the
#    trust ratio), so an element moves by about lr * rms(p) where Adam moves
#    it by about lr; BERT's init has rms 0.02, which carries the batch-128
#    AdamW grid over to 0.05-0.5: half-decades around 0.1. (The LAMB and
#    LANS papers' rates, ~6e-3 to 1e-2, are for BERT-large, whose Adam rate
#    is 1e-4 where a 2-layer model takes 1e-3.)
GRIDS = [("adamw", SMALL, [3e-4, 1e-3, 3e-3]),
         ("lans", LARGE, [3e-2, 1e-1, 3e-1]),
         ("lamb", LARGE, [3e-2, 1e-1, 3e-1]),
         ("adamw", LARGE, [1e-3, 3e-3, 1e-2])]
MAX_EXTENSIONS = 2         # the grid rule (see the docstring)
REUSE_TOLERANCE = 1e-3     # a saved run rerun: max |held-out loss difference|
NAMES = {"lans": "LANS", "lamb": "LAMB", "adamw": "AdamW", "adam": "Adam"}

sys.path.insert(0, str(ROOT / "models" / "bert"))
sys.path.insert(0, str(ROOT / "test" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
import corpus  # noqa: E402
import generate  # noqa: E402
import reference  # noqa: E402

T0 = time.perf_counter()


def log(msg):
    print(f"[{time.perf_counter() - T0:7.1f} s] {msg}", flush=True)


def special_ids(c):
    return (c.pad_id, c.unk_id, c.cls_id, c.sep_id, c.mask_id)


def training_stream(c, n):
    """n masked rows: epochs of the train split, each with its own window
    offset, order and masks. Returns (ids [n, S], positions, labels) with
    flat positions r * S + s over the n rows."""
    g = np.random.default_rng(DATA_SEED)
    rows, total, epoch = [], 0, 0
    while total < n:                   # bounded: ceil(n / rows per epoch)
        x = corpus.sequences(c.train, SEQ, c.cls_id, c.sep_id,
                             offset=(epoch * 41) % (SEQ - 2))
        rows.append(x[g.permutation(len(x))])
        total += len(x)
        epoch += 1
    x = np.concatenate(rows)[:n]
    return reference.masking(x, g, len(c.vocab), mask_id=c.mask_id,
                             special_ids=special_ids(c)), len(rows[0])


def held_out(c):
    x = corpus.sequences(c.valid, SEQ, c.cls_id, c.sep_id)[:EVAL_ROWS]
    return reference.masking(x, np.random.default_rng(EVAL_SEED),
                             len(c.vocab), mask_id=c.mask_id,
                             special_ids=special_ids(c))


def unigram_loss(c, valid):
    """The held-out loss of predicting every masked token from the train
    split's token frequencies (add-one, special tokens excluded): what a
    model that has learned no context scores."""
    counts = np.bincount(c.train, minlength=len(c.vocab)).astype(float) + 1
    counts[list(special_ids(c))] = 0
    return float(-np.log(counts[valid[2]] / counts.sum()).mean())


def batch(data, start, size):
    """Rows [start, start + size) of a masked set, positions rebased."""
    ids, pos, lab = data
    lo, hi = np.searchsorted(pos, [start * SEQ, (start + size) * SEQ])
    return (ids[start:start + size], pos[lo:hi] - np.int32(start * SEQ),
            lab[lo:hi])


def config(opt, b, lr, steps, vocab):
    return generate.Config(
        layers=2, hidden=128, heads=2, seq=SEQ, vocab=vocab, batch=b,
        optimizer=opt, lr=lr, warmup=max(1, round(WARMUP_FRACTION * steps)),
        total_steps=steps, weight_decay=0.01, max_grad_norm=1.0,
        name=f"lb_{opt}_{b}")


def compiled(cfg, out):
    """The Model of cfg, from out/ if compiled before with the same source
    and grovec; grovec is retried (others may be rebuilding it)."""
    from grove_testing import Model
    text = generate.generate(cfg)
    h = hashlib.sha256(text.encode())
    for tool in (ROOT / "build" / "bin" / "grovec",
                 ROOT / "build" / "lib" / "libgrove_rt.so"):
        st = tool.stat() if tool.exists() else None
        h.update(repr(st and (st.st_size, st.st_mtime_ns)).encode())
    work = out / f"{cfg.name}-{h.hexdigest()[:16]}"
    so = work / f"lib{cfg.name}.so"
    if so.exists():
        return Model(text, name=cfg.name, workdir=str(work),
                     library=str(so)), 0.0
    work.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        t0 = time.perf_counter()
        try:
            return (Model(text, name=cfg.name, workdir=str(work)),
                    time.perf_counter() - t0)
        except RuntimeError as e:
            if attempt == 2:
                raise
            log(f"grovec failed ({str(e).splitlines()[0][:120]}); retrying "
                "in 60 s")
            time.sleep(60)


def evaluate(model, b, data):
    """Mean cross-entropy over every masked token of the held-out set."""
    total, count = 0.0, 0
    for s in range(0, EVAL_ROWS, b):
        ids, pos, lab = batch(data, s, b)
        loss, = model.call("mlm_loss", ids, pos, lab)
        total += float(loss) * len(lab)
        count += len(lab)
    return total / count


def run(opt, b, lr, n, stream, valid, init, vocab, out, points):
    steps = n // b
    cfg = config(opt, b, lr, steps, vocab)
    model, secs = compiled(cfg, out)
    for k, a in init.items():
        model.set_weight(k, a)
    at = sorted({max(1, round(steps * k / points)) for k in range(1, points + 1)})
    t0, losses = time.perf_counter(), []
    curve = [(0, evaluate(model, b, valid))]
    for step in range(steps):
        loss, = model.call("train_step", *batch(stream, step * b, b))
        losses.append(float(loss))
        if step + 1 in at:
            e = evaluate(model, b, valid)
            curve.append((step + 1, e))
            log(f"  {NAMES[opt]:5s} batch {b:3d} lr {lr:g}: step {step + 1:5d}"
                f"/{steps} train {np.mean(losses):.3f} held-out {e:.3f}")
            losses = []
            if not math.isfinite(e):
                log("  diverged: run stopped")
                break
    train_s = time.perf_counter() - t0
    return dict(opt=opt, b=b, lr=lr, steps=steps, warmup=cfg.warmup,
                curve=curve, final=curve[-1][1] if len(curve) and
                curve[-1][0] == steps else float("nan"),
                compile_s=secs, train_s=train_s)


def reached(r, target):
    for step, e in r["curve"]:
        if e <= target:
            return step
    return None


def half_decade(lr, direction):
    """The rate one half-decade below (direction -1) or above (+1) lr, on
    the grids' 1-3-10 ladder."""
    k = round(2 * math.log10(lr)) + direction
    return float(f"{10 ** (k / 2):.0e}")


def score(r):
    return r["final"] if math.isfinite(r["final"]) else math.inf


def fingerprint(n, per_epoch, masked, points):
    """What a saved run must share with this one to be reused."""
    return dict(seq=SEQ, small=SMALL, large=LARGE, n=n, per_epoch=per_epoch,
                masked=masked, points=points,
                warmup_fraction=WARMUP_FRACTION, eval_rows=EVAL_ROWS,
                seeds=[DATA_SEED, EVAL_SEED, INIT_SEED])


def source_hash(cfg):
    return hashlib.sha256(generate.generate(cfg).encode()).hexdigest()[:16]


def saved_runs(path, fp, log):
    """(runs, sessions) of the results.json at path if its configuration is
    fp, else ([], [])."""
    if not path.exists():
        return [], []
    prev = json.loads(path.read_text())
    if prev.get("quick"):
        log(f"not reusing {path}: a --quick run")
        return [], []
    # The first results.json (commit 775b611) has no "config": its
    # constants were this script's (only the rates and reuse are new).
    theirs = prev.get("config") or fingerprint(
        prev["n"], prev["per_epoch"], prev["masked"], prev["points"])
    diff = sorted(k for k in fp if theirs.get(k) != fp[k])
    if diff:
        log(f"not reusing {path}: {', '.join(diff)} differ")
        return [], []
    sessions = prev.get("sessions") or [dict(
        date=datetime.datetime.fromtimestamp(path.stat().st_mtime)
        .strftime("%Y-%m-%d"), total_s=prev["total_s"],
        new_runs=len(prev["results"]), reused=0)]
    log(f"{len(prev['results'])} saved runs in {path}")
    return prev["results"], sessions


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--fresh", action="store_true",
                    help="run everything, reusing no saved run")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--sequences", type=int)
    ap.add_argument("--out", default=str(ROOT / "build-bench" / "lans_bert"))
    ap.add_argument("--report", metavar="JSON",
                    help="rewrite the report from a run's results.json "
                    "(in --out) without training")
    opts = ap.parse_args()
    if opts.report:
        saved = json.loads(Path(opts.report).read_text())
        section = report(**saved)
        print(section)
        if not (saved["quick"] or opts.no_write):
            from timing import write_perf_section
            write_perf_section(ROOT / "docs" / "perf.md", "lans-bert", section)
        return
    n = opts.sequences or (512 if opts.quick else SEQUENCES)
    if n % LARGE:
        ap.error(f"--sequences must be a multiple of {LARGE}")
    points = 4 if opts.quick else EVAL_POINTS
    grids = [(o, b, [g[1]] if opts.quick else g) for o, b, g in GRIDS]
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)

    c = corpus.load()
    vocab = len(c.vocab)
    stream, per_epoch = training_stream(c, n)
    valid = held_out(c)
    init = generate.init(config("lans", SMALL, 1e-3, 10, vocab), INIT_SEED)
    log(f"{n} sequences of {SEQ} per run ({n / per_epoch:.2f} epochs of "
        f"{per_epoch}); {len(stream[2])} masked tokens; held-out: {EVAL_ROWS} "
        f"rows, {len(valid[2])} masked tokens")
    fp = fingerprint(n, per_epoch, len(valid[2]), points)
    path = out / ("results-quick.json" if opts.quick else "results.json")
    saved, sessions = ([], []) if opts.quick or opts.fresh else \
        saved_runs(path, fp, log)
    today = datetime.datetime.now().strftime("%Y-%m-%d")
    check = None

    def train(opt, b, lr):
        r = run(opt, b, lr, n, stream, valid, init, vocab, out, points)
        r.update(source=source_hash(config(opt, b, lr, n // b, vocab)),
                 date=today)
        log(f"{NAMES[opt]} batch {b} lr {lr:g}: final {r['final']:.4f}; "
            f"compiled in {r['compile_s']:.1f} s, trained and evaluated "
            f"in {r['train_s']:.1f} s")
        return r

    def verify(s):
        """Runs saved run s again: is its held-out curve the same?"""
        log(f"reuse check: {NAMES[s['opt']]} batch {s['b']} lr {s['lr']:g} "
            "again")
        r = train(s["opt"], s["b"], s["lr"])
        same = [a[0] for a in r["curve"]] == [a[0] for a in s["curve"]]
        d = max(abs(a[1] - b[1]) for a, b in zip(r["curve"], s["curve"])) \
            if same else math.inf
        ok = same and d <= REUSE_TOLERANCE and \
            s.get("source", r["source"]) == r["source"]
        log(f"reuse check: max held-out difference {d:.2g} "
            f"({'reusing' if ok else 'not reusing'} the saved runs)")
        return dict(opt=s["opt"], b=s["b"], lr=s["lr"], max_diff=d, ok=ok,
                    tolerance=REUSE_TOLERANCE, train_s=r["train_s"])

    def get(results, opt, b, lr, extension, edge):
        """Run (opt, b, lr), or its saved run; edge: the saved run a new
        rate competes with (the one rerun to check reuse)."""
        nonlocal check
        s = next((x for x in saved if (x["opt"], x["b"]) == (opt, b)
                  and math.isclose(x["lr"], lr)), None)
        if s is not None:
            r = dict(s, extension=extension, reused=True)
        else:
            if saved and check is None:
                check = verify(edge or next(x for x in saved
                                            if x["b"] == LARGE))
                if not check["ok"]:
                    raise LookupError
            r = dict(train(opt, b, lr), extension=extension, reused=False)
        results.append(r)
        return r

    def all_grids():
        results = []
        for opt, b, grid in grids:
            mine = [get(results, opt, b, lr, 0, None) for lr in grid]
            for k in range(1, MAX_EXTENSIONS + 1):
                if len(grid) < 2:          # --quick: one rate, no rule
                    break
                rates = sorted(mine, key=lambda r: r["lr"])
                best = min(mine, key=score)
                if best is rates[0]:
                    lr = half_decade(best["lr"], -1)
                elif best is rates[-1]:
                    lr = half_decade(best["lr"], +1)
                else:
                    break
                log(f"{NAMES[opt]} batch {b}: best lr {best['lr']:g} at the "
                    f"edge of its grid; extension {k}: lr {lr:g}")
                mine.append(get(results, opt, b, lr, k,
                                best if best.get("reused") else None))
        return results

    try:
        results = all_grids()
    except LookupError:
        log("the saved runs are not reused: every run again")
        saved, sessions = [], []
        results = all_grids()
    # Every run starts from the same weights: the same held-out loss.
    initial = [r["curve"][0][1] for r in results]
    if max(initial) - min(initial) > 1e-4:
        log(f"warning: the initial held-out losses differ: {initial}")
    total_s = time.perf_counter() - T0
    new = sum(not r["reused"] for r in results)
    sessions = sessions + [dict(date=today, total_s=total_s, new_runs=new,
                                reused=len(results) - new, check=check)]
    saved = dict(results=results, n=n, per_epoch=per_epoch, initial=initial,
                 masked=len(valid[2]), total_s=total_s, points=points,
                 quick=opts.quick, unigram=unigram_loss(c, valid),
                 config=fp, sessions=sessions)
    if path.exists() and not opts.quick:
        (out / "results-prev.json").write_text(path.read_text())
    path.write_text(json.dumps(saved, indent=1))
    section = report(**saved)
    print("\n" + section)
    log(f"{new} runs trained, {len(results) - new} reused; "
        f"{total_s / 60:.1f} min")
    if not (opts.quick or opts.no_write):
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "lans-bert", section)
        log("wrote the lans-bert section of docs/perf.md")


def fmt(x):
    return f"{x:.3f}" if math.isfinite(x) else "diverged"


def ext_mark(r, form=" (ext. "):
    k = r.get("extension", 0)
    return f"{form}{k}{')' if form.endswith('(ext. ') else ''}" if k else ""


def sessions_text(sessions, total_s, results):
    """How long the runs took, over the invocations that made them."""
    if not sessions:
        return f"the whole run took {total_s / 60:.1f} min"
    last = sessions[-1]
    c = last.get("check")
    if len(sessions) == 1:
        return f"the whole run took {last['total_s'] / 60:.1f} min" + (
            "" if not c else " (the runs saved by an earlier invocation were "
            f"not reused: {NAMES[c['opt']]} at batch {c['b']}, lr "
            f"{c['lr']:g}, run again with today's compiler, differed from its "
            f"saved held-out losses by up to {c['max_diff']:.2g}, over the "
            f"tolerance {c['tolerance']:g})")
    earlier = sessions[:-1]
    text = (f"the runs took {sum(s['total_s'] for s in sessions) / 60:.1f} "
            f"min in {len(sessions)} invocations: "
            + "; ".join(f"{s['date']}, {s['new_runs']} runs in "
                        f"{s['total_s'] / 60:.1f} min" for s in earlier)
            + f"; {last['date']}, {last['new_runs']} new runs"
            + (" and the reuse check" if c else "") + " in "
            f"{last['total_s'] / 60:.1f} min, reusing the {last['reused']} "
            "saved in results.json (same sequences, masks, evaluation, seeds "
            "and warm-up)")
    if c:
        text += (f" after running one of them again ({NAMES[c['opt']]} at "
                 f"batch {c['b']}, lr {c['lr']:g}, with today's compiler: "
                 + ("its held-out losses identical to the saved ones"
                    if c["max_diff"] == 0 else
                    f"its held-out losses within {c['max_diff']:.2g} of the "
                    f"saved ones, tolerance {c['tolerance']:g}") + ")")
    return text


def report(results, n, per_epoch, initial, masked, total_s, points, quick,
           unigram, config=None, sessions=None):
    from run import machine_info
    order = {(o, b): i for i, (o, b, _) in enumerate(GRIDS)}
    results = sorted(results, key=lambda r: (order[(r["opt"], r["b"])],
                                             r["lr"]))
    small = [r for r in results if r["b"] == SMALL]
    best_small = min(small, key=score)
    target = best_small["final"]
    best = {}
    for r in results:
        key = (r["opt"], r["b"])
        if key not in best or score(r) < score(best[key]):
            best[key] = r
    when = datetime.datetime.now().strftime("%Y-%m-%d")
    small_steps, large_steps = n // SMALL, n // LARGE
    lines = [
        "<!-- lans-bert: written by bench/lans_bert.py -->",
        "## LANS at a large batch (BERT-tiny masked-LM pretraining)", "",
        f"{when}, {os.cpu_count()} cores ({machine_info()}); "
        f"{'`--quick` smoke run; ' if quick else ''}"
        f"{sessions_text(sessions, total_s, results)}. Command: "
        "`.venv/bin/python bench/lans_bert.py`.", "",
        "The LANS paper's claim, at BERT-tiny's scale: at a batch 16× larger, "
        "LANS reaches the small-batch loss in 1/16 of the steps, where LAMB "
        "and AdamW fall short. BERT-tiny (models/bert/generate.py: 2 layers, "
        "hidden 128, 2 heads, post-LN, vocabulary 8,192) pretrained on the "
        "masked-LM loss alone from the same initial weights, each run with "
        "its compiled `train_step` (`--optimizer`): one global gradient clip "
        "at 1.0, weight decay 0.01 on weight matrices and embeddings and none "
        "on biases and LayerNorm, the rate warmed up linearly over the first "
        f"{WARMUP_FRACTION:.0%} of the steps then decayed linearly to 0. "
        f"Every run sees the same {n:,} sequences of {SEQ} tokens "
        f"({n / per_epoch:.1f} epochs of build/data/bert's train split; "
        "each epoch its own window offset, order and BERT masking, 15% and "
        "80/10/10, drawn once), so equal tokens: "
        f"{small_steps:,} steps at batch {SMALL}, {large_steps} at batch "
        f"{LARGE}. Held-out loss: the mean MLM cross-entropy over the "
        f"{masked:,} masked tokens of the valid split's first "
        f"{EVAL_ROWS} sequences (masked once, fixed seed), evaluated at every "
        f"1/{points} of each run; {min(initial):.3f} at the "
        f"initial weights (ln 8192 = {math.log(8192):.3f}); {unigram:.3f} "
        "for predicting every masked token from the train split's token "
        "frequencies (add-one), the score of a model that has learned no "
        "context.", "",
        "Rates: each optimizer at each batch tried at every rate of a grid "
        "fixed before the run (half-decades: AdamW at batch 8 around 1e-3, "
        "BERT-base's 1e-4 being too small for a 2-layer model and under 1,000 "
        "steps; AdamW at batch 128 that grid times ~√16, the square-root "
        "scaling usual for Adam; LAMB and LANS around 0.1: their rate scales "
        "each layer's step to its norm, so an element moves by ~lr·rms(p) "
        "where Adam moves it by ~lr, and BERT's init rms 0.02 carries the "
        "batch-128 AdamW grid to 0.05–0.5; the papers' ~6e-3 to 1e-2 are for "
        "BERT-large, whose Adam rate is 10× smaller), and the best chosen on "
        "the same held-out "
        "set (an upper bound for every optimizer alike). **Grid rule** "
        "(stated before the results, applied automatically to every "
        f"optimizer and batch alike, batch {SMALL} included): a grid whose "
        "best rate is at its edge is extended by one more half-decade step "
        "beyond that edge, repeatedly, at most "
        f"{MAX_EXTENSIONS} extensions; the original rates are kept, and a "
        "rate from the k-th extension is marked (ext. k). "
        f"**Target: {target:.3f}**, the final held-out loss of the best "
        f"batch-{SMALL} run (AdamW, lr {best_small['lr']:g}). \"Reached at\": "
        "the first evaluation at or below the target (so a step count "
        "rounded up to the evaluation cadence), the share of the tokens seen "
        f"by then, and the steps as a multiple of the {small_steps:,} "
        "small-batch steps (the claim: about 1/16 = 0.0625). One seed (data "
        "order, masks, initial weights): differences of a few hundredths in "
        "loss are within what another seed might change (not measured "
        "here).", "",
        "| optimizer | batch | lr | steps (warm-up) | final held-out loss | "
        "reached the target at | train time |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in results:
        s = reached(r, target)
        mark = " **(best)**" if best[(r["opt"], r["b"])] is r else ""
        where = ("not reached" if s is None else
                 f"step {s} ({s * r['b'] / n:.0%} of the tokens; "
                 f"{s / small_steps:.3f} × the small-batch steps)")
        lines.append(f"| {NAMES[r['opt']]}{mark} | {r['b']} | "
                     f"{r['lr']:g}{ext_mark(r)} | "
                     f"{r['steps']:,} ({r['warmup']}) | {fmt(r['final'])} | "
                     f"{where} | {r['train_s']:.0f} s |")
    # The best run of each grid over the run (fractions of its tokens).
    fracs = [1 / 8, 1 / 4, 1 / 2, 3 / 4, 1]
    lines += ["", "Held-out loss of each grid's best run after a share of "
              "the tokens (the same tokens for every run):", "",
              "| optimizer | batch | lr | " + " | ".join(
                  f"{f:g}" if f < 1 else "all" for f in fracs) + " |",
              "| --- | ---: | ---: |" + " ---: |" * len(fracs)]
    for (opt, b), r in best.items():
        cells = []
        for f in fracs:
            want = max(1, round(r["steps"] * f))
            got = [e for s, e in r["curve"] if s == want]
            cells.append(fmt(got[0]) if got else "–")
        lines.append(f"| {NAMES[opt]} | {b} | {r['lr']:g}{ext_mark(r)} | "
                     + " | ".join(cells) + " |")
    lines += ["", verdict(best, target, n) + grid_text(results, best)
              + (
        f" The target is {unigram - target:.3f} below the unigram score "
        f"({unigram:.3f}): " + (
            "at this scale and budget the models learn little beyond token "
            "frequencies, so this is a weak test of the claim (a longer run, "
            "past what fits on 2 cores, would be a stronger one)."
            if unigram - target < 0.5 else
            "the models learn context beyond token frequencies."))]
    lines.append("<!-- /lans-bert -->")
    return "\n".join(lines)


def grid_text(results, best):
    """What the grid rule did, and which best rates are still at an edge."""
    parts, edges, inside = [], [], []
    for (opt, b), r in best.items():
        mine = sorted((x for x in results if (x["opt"], x["b"]) == (opt, b)),
                      key=lambda x: x["lr"])
        rates = [x["lr"] for x in mine]
        exts = [x for x in mine if x.get("extension")]
        name = f"{NAMES[opt]} at batch {b}"
        where = ("lowest" if r["lr"] == rates[0] else "highest"
                 if r["lr"] == rates[-1] else None) if len(rates) > 1 else None
        if exts:
            exts.sort(key=lambda x: x["extension"])
            tried = " and ".join(f"{x['lr']:g} (final {fmt(x['final'])})"
                                 for x in exts)
            parts.append(f"{name} to {tried}: best {r['lr']:g}"
                         f"{ext_mark(r)}, " + (f"still the {where} rate"
                                               if where else
                                               "inside the grid"))
        if where:
            edges.append(f"{name} ({r['lr']:g}, the {where}"
                         + (f", after {len(exts)} extension"
                            f"{'s' if len(exts) > 1 else ''}" if exts else
                            ", not extended") + ")")
        elif not exts:
            inside.append(name)
    text = ""
    if parts:
        text += " The grid rule extended " + "; ".join(parts) + "."
    if inside:
        text += (f" No extension for {', '.join(inside)}: "
                 f"{'its' if len(inside) == 1 else 'their'} best rate is "
                 "inside the grid.")
    if edges:
        text += (" The best rate is still at an edge of its grid for "
                 + ", ".join(edges) + ": a rate beyond it might do better.")
    elif len(results) > len(best):
        text += " Every grid's best rate is now inside it."
    return text


def verdict(best, target, n):
    """One paragraph, from the numbers."""
    parts = []
    for opt in ("lans", "lamb", "adamw"):
        r = best.get((opt, LARGE))
        if r is None:
            continue
        s = reached(r, target)
        gap = r["final"] - target
        if s is None:
            parts.append(f"{NAMES[opt]} at batch {LARGE} (best lr "
                         f"{r['lr']:g}{ext_mark(r, ', ext. ')}) did not reach it: its final loss "
                         f"{fmt(r['final'])} is {gap:+.3f} from the target")
        else:
            parts.append(f"{NAMES[opt]} at batch {LARGE} (best lr "
                         f"{r['lr']:g}{ext_mark(r, ', ext. ')}) reached it at step {s} of "
                         f"{r['steps']} and ended at {fmt(r['final'])} "
                         f"({gap:+.3f})")
    lans = best.get(("lans", LARGE))
    ok = lans is not None and reached(lans, target) is not None
    others = [o for o in ("lamb", "adamw") if (o, LARGE) in best
              and reached(best[(o, LARGE)], target) is None]
    if ok and len(others) == 2:
        head = ("The result supports the claim at this scale: LANS reaches "
                "the small-batch loss in 1/16 of the steps and LAMB and "
                "AdamW do not. ")
    elif ok:
        also = [NAMES[o] for o in ("lamb", "adamw") if o not in others]
        head = ("LANS reaches the small-batch loss in 1/16 of the steps, as "
                f"claimed, but {' and '.join(also)} "
                f"{'does' if len(also) == 1 else 'do'} too: this run does not "
                "show LANS's advantage over "
                f"{'it' if len(also) == 1 else 'them'}. ")
    else:
        head = ("The result does not support the claim at this scale: LANS "
                "at the large batch does not reach the small-batch loss "
                "within the same tokens. ")
    return head + "; ".join(parts) + "."


if __name__ == "__main__":
    main()
