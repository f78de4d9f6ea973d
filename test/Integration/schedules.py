# RUN: %python %s
# grove.lr_schedule, compiled, against Hugging Face transformers' schedule
# formulas (transcribed below; the package is not a dependency) and
# torch's StepLR, at every step count from 0 to past the end, in f64
# (rtol 1e-12) and f32 (rtol 1e-6, atol 1e-7: rounding of cos near 0). Past total_steps Grove holds
# the final rate, where HF's cosine would rise again.
import math

import numpy as np
import torch
from grove_testing import Model, assert_close

LR, END, W, T = 0.5, 0.02, 4, 24
SCHEDULES = {
    "constant": f"constant %t {{lr = {LR} : f64, warmup_steps = {W}}}",
    "linear": f"polynomial %t {{lr = {LR} : f64, warmup_steps = {W}, "
              f"total_steps = {T}}}",
    "poly": f"polynomial %t {{lr = {LR} : f64, warmup_steps = {W}, "
            f"total_steps = {T}, end_lr = {END} : f64, power = 2.0 : f64}}",
    "cosine": f"cosine %t {{lr = {LR} : f64, warmup_steps = {W}, "
              f"total_steps = {T}, end_lr = {END} : f64}}",
    "cosine_nowarm": f"cosine %t {{lr = {LR} : f64, total_steps = {T}}}",
    "step": f"step_decay %t {{lr = {LR} : f64, step_size = 5, "
            f"gamma = 0.5 : f64}}",
    "step_warm": f"step_decay %t {{lr = {LR} : f64, warmup_steps = {W}, "
                 f"step_size = 3, gamma = 0.8 : f64}}",
}


def hf(kind, t):
    """The rate at step t (steps taken), as transformers' lr_lambda * lr."""
    w = 0 if kind in ("cosine_nowarm", "step") else W
    if t < w:
        return LR * t / max(1, w)
    if kind == "constant":
        return LR
    if kind in ("linear", "poly"):
        end, power = (0.0, 1.0) if kind == "linear" else (END, 2.0)
        if t > T:
            return end
        remaining = 1 - (t - w) / (T - w)
        return (LR - end) * remaining ** power + end
    if kind.startswith("cosine"):
        end = END if kind == "cosine" else 0.0
        progress = min(1.0, (t - w) / max(1, T - w))
        return end + (LR - end) * max(0.0, 0.5 * (1 + math.cos(math.pi * progress)))
    size, gamma = (5, 0.5) if kind == "step" else (3, 0.8)
    return LR * gamma ** ((t - w) // size)


def step_lr(n):
    """torch's StepLR(step_size=5, gamma=0.5): the rate of each of n steps."""
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=LR)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
    rates = []
    for _ in range(n):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


def source(e):
    funcs = "\n".join(f"""
  func.func @{k}(%t: tensor<{e}> {{grove.name = "t"}})
      -> (tensor<{e}> {{grove.name = "lr"}}) {{
    %lr = grove.lr_schedule {body} : tensor<{e}> -> tensor<{e}>
    return %lr : tensor<{e}>
  }}""" for k, body in SCHEDULES.items())
    return f"module @sched_{e} {{{funcs}\n}}"


def main():
    steps = range(T + 6)
    torch_step = step_lr(len(steps))
    precisions = (("f64", np.float64, 1e-12, 0.0),
                  ("f32", np.float32, 1e-6, 1e-7))
    # Both compiled before either runs (compile-only CUDA suite).
    models = {e: Model(source(e), name=f"sched_{e}") for e, *_ in precisions}
    for e, dtype, rtol, atol in precisions:
        model = models[e]
        for kind in SCHEDULES:
            got = [float(model.call(kind, np.array(t, dtype))[0]) for t in steps]
            want = [hf(kind, t) for t in steps]
            assert_close(np.array(got), np.array(want), rtol, atol,
                         f"{kind} ({e})")
            if kind == "step":
                assert_close(np.array(got), np.array(torch_step), rtol, atol,
                             f"{kind} ({e}) vs torch StepLR")
        print(f"{e}: {len(SCHEDULES)} schedules match over {len(steps)} steps")


if __name__ == "__main__":
    main()
