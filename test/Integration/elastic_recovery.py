# REQUIRES: mpi
# RUN: %python %s
# Elastic recovery (docs/distributed.md, "Elastic training"): the
# supervisor of bench/elastic_recovery.py runs the digits MLP on 4 ranks;
# the last rank kills itself at step 110, the survivors fail at their
# deadline and the supervisor relaunches on 3 from the checkpoint of step
# 100 (steps 101-110 redone); the node comes back and the job stops at its
# next checkpoint and goes on on 4. Checked: the launches and how each
# ended, every step run once in the final record with the world it ran
# on, and grove.elastic_lr's rate: 0.1 on 4, the first call on 3 at the
# old rate and then a linear ramp to 0.075 over 50 calls, and back.
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import elastic_recovery as E  # noqa: E402
from grove_testing import Model  # noqa: E402


def main():
    base = tempfile.mkdtemp(prefix="grove-elastic-")
    r = E.run(Model, base, "ramp", E.RAMP, 0, True, E.TOTAL)
    worlds = [(w, why) for w, why, _ in r["launches"]]
    assert worlds == [(4, "a rank died"), (3, "asked to stop"),
                      (4, "done")], worlds
    steps = r["steps"]
    assert sorted(steps) == list(range(1, E.TOTAL + 1)), sorted(steps)[:5]
    assert r["redone"] == E.KILL - E.KILL // E.EVERY * E.EVERY, r["redone"]
    shrink = E.KILL // E.EVERY * E.EVERY + 1
    grow = min(s for s in steps if s > shrink and steps[s]["world"] == 4)
    for s, row in steps.items():
        world = 4 if s < shrink or s >= grow else 3
        assert row["world"] == world, (s, row)
    lr = {s: row["lr"] for s, row in steps.items()}
    np.testing.assert_allclose(lr[shrink - 1], 0.1, rtol=1e-6)
    # The call that sees the change runs at the old rate; then the ramp.
    np.testing.assert_allclose(lr[shrink], 0.1, rtol=1e-6)
    for k in range(1, E.RAMP + 1):
        np.testing.assert_allclose(lr[shrink + k],
                                   0.1 - 0.025 * k / E.RAMP, rtol=1e-5)
    np.testing.assert_allclose(lr[grow - 1], 0.075, rtol=1e-6)
    np.testing.assert_allclose(lr[grow + E.RAMP], 0.1, rtol=1e-6)
    losses = [steps[s]["loss"] for s in sorted(steps)]
    assert np.isfinite(losses).all() and np.mean(losses[-25:]) < \
        np.mean(losses[:25]) / 5, losses[::25]
    print(f"elastic recovery: launches {worlds}; {r['redone']} steps "
          f"redone; recovery {r['recovery']:.1f} s; rate 0.1 -> 0.075 over "
          f"{E.RAMP} calls on 3 ranks and back from step {grow}")


if __name__ == "__main__":
    main()
