"""Elastic recovery: a 4-rank job loses a rank, goes on on 3 without a
person, and grows back to 4 (docs/distributed.md, "Elastic training").

Open MPI in Debian has no ULFM, so, as torchrun does, a supervisor
relaunches the job: it runs `mpirun -np N` over as many slots as the
resource manager offers (here a file, `slots`, that the bench writes as a
cluster's node manager would), and

* when the job fails (a rank died: the survivors' collectives miss their
  deadline, and each exits with 75 at once), relaunches it on the slots
  left, from the last checkpoint;
* when more slots appear, asks the job to stop at its next checkpoint (a
  STOP file that rank 0 reads there and all-reduces, so every rank stops
  at the same step) and relaunches it on all of them.

A restarted job learns the world changed from its checkpoint:
grove.elastic_lr's state holds the world of the last step, so its first
call on the new world starts the ramp. The model is the digits MLP of
bench/elastic.py (SGD, momentum 0.9, 32 digits a rank a step, the rate
0.1 x world / 4), its steps drawn from (seed, step), so each step's
global batch is the same whatever the world split. Three runs: fixed 4
ranks; elastic with the rate ramped over RAMP steps after each change;
elastic with the rate jumping. The fault: the last rank kills itself
(SIGKILL) at step KILL; the node comes back at step REGROW. Prints and
writes (marked "elastic-recovery" section of docs/perf.md) the loss over
windows of steps, the world and rate there, each relaunch, the steps
redone and the recovery time (from the kill to the first step on 3
ranks: the deadline, mpirun's teardown, the relaunch and the load).

    .venv/bin/python bench/elastic_recovery.py [--quick]
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RANK = ROOT / "bench" / "dist" / "elastic_rank.py"
sys.path.insert(0, str(ROOT / "bench"))
from elastic import source  # noqa: E402
from timing import quick_args, use_build  # noqa: E402

MAX, TOTAL, EVERY, KILL, REGROW, RAMP, WINDOW, TIMEOUT = \
    4, 300, 25, 110, 200, 50, 25, 5


def supervise(library, name, workdir, seed, kill, regrow, total, every):
    """Runs the job to `total` steps; returns its launches (world, why it
    ended, seconds)."""
    slots = Path(workdir, "slots")
    slots.write_text(str(MAX))
    launches, lost = [], False
    while True:
        world = min(MAX, int(slots.read_text()))
        Path(workdir, "STOP").unlink(missing_ok=True)
        env = {"TIMEOUT": str(TIMEOUT)}
        if kill is not None and not launches:
            env["KILL"] = str(kill)
        cmd, env = mpirun([sys.executable, str(RANK), library, name, workdir,
                           str(total), str(every), str(seed)], world, env)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env,
                                start_new_session=True)
        while proc.poll() is None and time.monotonic() - start < 600:
            # The checkpoint rank 0 waits at, read first: its step is in
            # the log by then, so the decisions below see it.
            pending = at_checkpoint(workdir)
            # The node manager: the killed rank's node goes, and comes
            # back when the job passes `regrow`.
            if not lost and Path(workdir, "killed.json").exists():
                slots.write_text(str(MAX - 1))
                lost = True
            if regrow is not None and world < MAX and \
                    last_step(workdir) >= regrow - every:
                slots.write_text(str(MAX))
            # The supervisor: more slots than ranks, so the job is asked to
            # stop at its next checkpoint.
            if int(slots.read_text()) > world:
                Path(workdir, "STOP").touch()
            acknowledge(workdir, pending)
            time.sleep(0.005)
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        out = proc.communicate()[0]
        ended = ("done" if proc.returncode == 0 and
                 last_step(workdir) >= total else
                 "asked to stop" if Path(workdir, "STOP").exists() else
                 "a rank died")
        launches.append((world, ended, time.monotonic() - start))
        if ended == "done":
            return launches
        if len(launches) > 6:
            raise RuntimeError(f"the job did not finish:\n{out}")


def at_checkpoint(workdir):
    """The step of the checkpoint rank 0 waits at (elastic_rank.py's
    await_ack), or None."""
    try:
        return Path(workdir, "at_checkpoint").read_text().strip() or None
    except OSError:
        return None


def acknowledge(workdir, step):
    """Lets rank 0 past the checkpoint of `step` (None: nothing to do), once
    the supervisor has decided about it."""
    if step is not None:
        tmp = Path(workdir, "ack.tmp")
        tmp.write_text(step)
        os.replace(tmp, Path(workdir, "ack"))


def mpirun(argv, ranks, extra):
    """mpirun over `ranks` local slots, recovery on (the survivors of a
    dead rank report rather than being killed with it)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", **extra,
               PYTHONPATH=str(ROOT / "test" / "lib"))
    cmd = ["mpirun", "--oversubscribe", "--enable-recovery", "-np",
           str(ranks), "--mca", "btl", "self,vader,tcp"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    for name in extra:
        cmd += ["-x", name]
    return cmd + argv, env


def last_step(workdir):
    p = Path(workdir, "log.jsonl")
    if not p.exists():
        return 0
    lines = p.read_text().splitlines()
    return json.loads(lines[-1])["step"] if lines else 0


def run(Model, base, label, ramp, seed, fault, total):
    workdir = os.path.join(base, label.replace(" ", "_"))
    os.makedirs(workdir)
    name = f"er{ramp}"
    text = source(ramp).replace("base_world = 1", f"base_world = {MAX}") \
        .replace(f"@el{ramp}", f"@{name}")
    Model(text, name=name, workdir=workdir, grovec_flags=["--data-parallel"])
    rng = np.random.default_rng(seed)
    np.savez(os.path.join(workdir, "initial.npz"), **{
        "fc1.weight": rng.uniform(-1, 1, (128, 64)).astype(np.float32) / 8,
        "fc1.bias": np.zeros(128, np.float32),
        "fc2.weight": (rng.uniform(-1, 1, (10, 128)) / np.sqrt(128))
        .astype(np.float32),
        "fc2.bias": np.zeros(10, np.float32)})
    launches = supervise(os.path.join(workdir, f"lib{name}.so"), name,
                         workdir, seed, KILL if fault else None,
                         REGROW if fault else None, total, EVERY)
    log = [json.loads(l) for l in
           Path(workdir, "log.jsonl").read_text().splitlines()]
    # A redone step appears twice: keep its last run.
    steps = {r["step"]: r for r in log}
    result = {"launches": launches, "steps": steps,
              "redone": len(log) - len(steps)}
    killed = Path(workdir, "killed.json")
    if killed.exists():
        # From the kill to the first step the smaller world completed.
        at = json.loads(killed.read_text())["time"]
        after = [r["time"] for r in log if r["world"] < MAX]
        result["recovery"] = after[0] - at if after else float("nan")
    return result


def main():
    opts = quick_args(__doc__)
    use_build()
    from grove_testing import Model
    base = tempfile.mkdtemp(prefix="grove-elastic-recovery-")
    runs = [("fixed 4 ranks", 0, False),
            (f"elastic, ramp over {RAMP}", RAMP, True),
            ("elastic, rate jumps", 0, True)]
    results = {}
    for label, ramp, fault in runs:
        r = run(Model, base, label, ramp, 0, fault, TOTAL)
        results[label] = r
        print(f"{label:28s} launches " + ", ".join(
            f"{w} ranks: {why} ({s:.1f} s)" for w, why, s in r["launches"])
            + f"; {r['redone']} steps redone"
            + (f"; recovery {r['recovery']:.1f} s" if "recovery" in r
               else ""), flush=True)
    section = report(results)
    print("\n" + section)
    if not opts.quick:
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "elastic-recovery",
                           section)


def report(results):
    windows = list(range(0, TOTAL, WINDOW))
    lines = ["<!-- elastic-recovery: written by bench/elastic_recovery.py -->",
             "## Elastic recovery: a rank lost and regained (digits MLP)", "",
             f"`bench/elastic_recovery.py`: {MAX} ranks under a supervisor "
             f"that relaunches the job (docs/distributed.md); the last rank "
             f"killed at step {KILL} (last checkpoint: step "
             f"{KILL // EVERY * EVERY}), the job going on on {MAX - 1} ranks "
             f"from it, its node back around step {REGROW - EVERY} (the job "
             f"stops at its next checkpoint and goes on on {MAX}). The communicator's "
             f"deadline is {TIMEOUT} s. Training loss of rank 0's share of "
             f"each step's global batch, averaged over windows of {WINDOW} "
             f"steps; each run's world over the window in brackets.", "",
             "| run | launches | steps redone | recovery | "
             + " | ".join(f"{w + 1}-{w + WINDOW}" for w in windows) + " |",
             "| --- | --- | --- | --- | "
             + " | ".join("---" for _ in windows) + " |"]
    for label, r in results.items():
        cells = []
        for w in windows:
            rows = [r["steps"][s] for s in range(w + 1, w + WINDOW + 1)
                    if s in r["steps"]]
            worlds = sorted({x["world"] for x in rows})
            cells.append(f"{np.mean([x['loss'] for x in rows]):.3f} "
                         f"[{'/'.join(map(str, worlds))}]")
        launches = ", ".join(f"{w} ({why})" for w, why, _ in r["launches"])
        recovery = f"{r['recovery']:.1f} s" if "recovery" in r else "-"
        lines.append(f"| {label} | {launches} | {r['redone']} | {recovery} | "
                     + " | ".join(cells) + " |")
    lines.append("<!-- /elastic-recovery -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
