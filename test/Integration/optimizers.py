# RUN: %python %s
# Compiled train steps (forward, backward and optimizer update in one call,
# state in the context) against PyTorch's own optimizers, step by step over
# 20 steps of fresh random batches: the loss of every step and every param
# and optimizer state after the last. A two-layer MLP with cross-entropy;
# `@unused` is differentiated but reaches no loss (zero gradients) and the
# biases start at zero (zero weights); two configurations clip the global
# gradient norm and skip a step whose batch holds a NaN.
#  * f64 models against torch in float64: rtol 1e-6, atol 1e-9;
#  * f32 models against torch in float64: rtol 2e-4, atol 2e-5 (f32
#    rounding, compounded over the steps).
import numpy as np
import torch
from grove_testing import Model, assert_close, rng

STEPS = 20
CONFIGS = {
    "sgd": ("grove.sgd", "{lr = 0.1 : f64}",
            lambda p: torch.optim.SGD(p, lr=0.1)),
    "sgd_nesterov": ("grove.sgd",
                     "{lr = 0.05 : f64, momentum = 0.9 : f64, nesterov, "
                     "weight_decay = 0.01 : f64}",
                     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9,
                                               nesterov=True,
                                               weight_decay=0.01)),
    "adam": ("grove.adam", "{lr = 0.01 : f64, weight_decay = 0.001 : f64}",
             lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.001)),
    "adamw": ("grove.adam",
              "{lr = 0.01 : f64, beta1 = 0.8 : f64, beta2 = 0.99 : f64, "
              "epsilon = 1.0e-06 : f64, weight_decay = 0.1 : f64, decoupled}",
              lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.8, 0.99),
                                          eps=1e-6, weight_decay=0.1)),
    # Global-norm clipping and a skipped NaN step (see NAN_STEP).
    "sgd_clip_skip": ("grove.sgd",
                      "{lr = 0.1 : f64, momentum = 0.9 : f64, "
                      "max_grad_norm = 0.5 : f64, skip_nonfinite}",
                      lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    "adam_clip_skip": ("grove.adam",
                       "{lr = 0.01 : f64, max_grad_norm = 1.0 : f64, "
                       "skip_nonfinite}",
                       lambda p: torch.optim.Adam(p, lr=0.01)),
}
# The step whose batch holds a NaN: a skipping optimizer changes nothing
# (torch: the step is not taken) and counts it in @<name>.skipped.
NAN_STEP = 7
SHAPES = {"fc1.weight": (16, 8), "fc1.bias": (16,), "fc2.weight": (4, 16),
          "fc2.bias": (4,), "unused": (3,)}


def source(name, op, attrs, e):
    T = lambda s: "tensor<" + "x".join(map(str, s)) + "x" + e + ">"
    params = "\n".join(f"  grove.param @{p} : {T(s)}"
                       for p, s in SHAPES.items())
    wrt = ", ".join(f"@{p}" for p in SHAPES)
    types = ", ".join(T(s) for s in SHAPES.values())
    grads = ", ".join(f"%g#{i}" for i in range(len(SHAPES)))
    return f"""
module @{name} {{
{params}
  func.func @logits(%x: tensor<?x8x{e}>) -> tensor<?x4x{e}> {{
    %w1 = grove.get_param @fc1.weight : {T((16, 8))}
    %b1 = grove.get_param @fc1.bias : {T((16,))}
    %w2 = grove.get_param @fc2.weight : {T((4, 16))}
    %b2 = grove.get_param @fc2.bias : {T((4,))}
    %h = grove.matmul %x, %w1 {{transpose_rhs}}
        : (tensor<?x8x{e}>, {T((16, 8))}) -> tensor<?x16x{e}>
    %hb = grove.add %h, %b1 : (tensor<?x16x{e}>, {T((16,))}) -> tensor<?x16x{e}>
    %a = grove.relu %hb : tensor<?x16x{e}>
    %o = grove.matmul %a, %w2 {{transpose_rhs}}
        : (tensor<?x16x{e}>, {T((4, 16))}) -> tensor<?x4x{e}>
    %ob = grove.add %o, %b2 : (tensor<?x4x{e}>, {T((4,))}) -> tensor<?x4x{e}>
    return %ob : tensor<?x4x{e}>
  }}
  func.func @train_step(%x: tensor<?x8x{e}> {{grove.name = "x"}},
                        %y: tensor<?xi32> {{grove.name = "labels"}})
      -> (tensor<{e}> {{grove.name = "loss"}}) {{
    %loss, %g:{len(SHAPES)} = grove.value_and_grad [{wrt}] {{
      %z = func.call @logits(%x) : (tensor<?x8x{e}>) -> tensor<?x4x{e}>
      %u = grove.get_param @unused : {T((3,))}
      %l = grove.softmax_cross_entropy %z, %y
          : (tensor<?x4x{e}>, tensor<?xi32>) -> tensor<{e}>
      grove.yield %l : tensor<{e}>
    }} : tensor<{e}>, {types}
    {op} [{wrt}] ({grads}) {attrs} : {types}
    return %loss : tensor<{e}>
  }}
}}
"""


def main():
    r = rng()
    PRECISIONS = (("f64", np.float64, 1e-6, 1e-9), ("f32", np.float32, 2e-4, 2e-5))
    # Every model is compiled before any runs (on a machine without a GPU the
    # CUDA suite only compiles them).
    models = {f"{c}_{e[0]}": Model(source(f"{c}_{e[0]}", op, attrs, e[0]),
                                   name=f"{c}_{e[0]}")
              for e in PRECISIONS for c, (op, attrs, _) in CONFIGS.items()}
    for e, dtype, rtol, atol in PRECISIONS:
        for config, (op, attrs, make) in CONFIGS.items():
            name = f"{config}_{e}"
            model = models[name]
            init = {p: (np.zeros(s) if p.endswith("bias") else
                        r.standard_normal(s) * 0.5).astype(dtype)
                    for p, s in SHAPES.items()}
            for p, v in init.items():
                model.set_weight(p, v)
            ref = {p: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                   for p, v in init.items()}
            opt = make(list(ref.values()))
            for step in range(STEPS):
                x = r.standard_normal((6, 8)).astype(dtype)
                y = r.integers(0, 4, 6).astype(np.int32)
                skip = "skip" in config and step == NAN_STEP
                if skip:
                    x[2, 3] = np.nan
                loss, = model.call("train_step", x, y)
                if skip:
                    assert np.isnan(loss), f"{name}: the NaN step's loss {loss}"
                    continue
                opt.zero_grad()
                tx = torch.tensor(x, dtype=torch.float64)
                h = torch.relu(tx @ ref["fc1.weight"].T + ref["fc1.bias"])
                z = h @ ref["fc2.weight"].T + ref["fc2.bias"]
                want = torch.nn.functional.cross_entropy(
                    z, torch.tensor(y, dtype=torch.int64))
                # The unused param takes part with a zero gradient, as in
                # Grove (torch skips params whose .grad is None).
                (want + 0.0 * ref["unused"].sum()).backward()
                if "clip" in config:
                    norm = 0.5 if op == "grove.sgd" else 1.0
                    torch.nn.utils.clip_grad_norm_(list(ref.values()), norm)
                opt.step()
                assert_close(loss, want.item(), rtol, atol,
                             f"{name} loss at step {step}")
            for p in SHAPES:
                assert_close(model.get_weight(p), ref[p].detach().numpy(), rtol,
                             atol, f"{name} {p} after {STEPS} steps")
            # The optimizer's state, under its safetensors names.
            for p, t in ref.items():
                st = opt.state[t]
                slots = {"momentum_buffer": f"{p}.sgd.momentum",
                         "exp_avg": f"{p}.adam.m", "exp_avg_sq": f"{p}.adam.v"}
                for key, grove_name in slots.items():
                    if key in st and st[key] is not None:
                        assert_close(model.get_weight(grove_name),
                                     st[key].numpy(), rtol, atol,
                                     f"{name} {grove_name}")
            skipped = 1 if "skip" in config else 0
            if op == "grove.adam":
                assert model.get_weight("adam.step") == STEPS - skipped, \
                    "adam.step"
            if skipped:
                prefix = op.split(".")[1]
                assert model.get_weight(f"{prefix}.skipped") == 1, "skipped"
            print(f"{name}: {STEPS} steps match torch.optim")


if __name__ == "__main__":
    main()
