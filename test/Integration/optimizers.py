# RUN: %python %s
# Compiled train steps (forward, backward and optimizer update in one call,
# state in the context) against PyTorch's own optimizers, or float64 numpy
# transcriptions of the references where PyTorch has none (LAMB, LANS,
# AdaAlter: test/lib/reference_optimizers.py), step by step over 20 steps
# of fresh random batches: the loss of every step and every param and
# optimizer state after the last. A two-layer MLP with cross-entropy;
# `@unused` is differentiated but reaches no loss (zero gradients) and the
# biases start at zero (zero weights); some configurations clip the global
# gradient norm and skip a step whose batch holds a NaN, and one takes its
# learning rate from a cosine schedule over its step counter.
#  * f64 models against torch in float64: rtol 1e-6, atol 1e-9;
#  * f32 models against torch in float64: rtol 2e-4, atol 2e-5 (f32
#    rounding, compounded over the steps).
import os

import numpy as np
import reference_optimizers as ref_opt
import torch
from grove_testing import Model, assert_close, rng

STEPS = 20
# Per-param groups, in SHAPES' order (fc1.weight, fc1.bias, fc2.weight,
# fc2.bias, unused).
DECAYS = [0.01, 0.0, 0.01, 0.0, 0.01]
TRUST = [True, True, False, False, True]
GROUP_DECAYS = ", ".join(str(d) for d in DECAYS)
GROUP_TRUST = ", ".join("true" if t else "false" for t in TRUST)
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
    "adagrad": ("grove.adagrad", "{lr = 0.1 : f64, weight_decay = 0.01 : f64}",
                lambda p: torch.optim.Adagrad(p, lr=0.1, weight_decay=0.01)),
    "adagrad_decay": ("grove.adagrad",
                      "{lr = 0.1 : f64, lr_decay = 0.05 : f64, "
                      "initial_accumulator_value = 0.1 : f64, "
                      "epsilon = 1.0e-08 : f64}",
                      lambda p: torch.optim.Adagrad(
                          p, lr=0.1, lr_decay=0.05,
                          initial_accumulator_value=0.1, eps=1e-8)),
    "lamb": ("grove.lamb", "{lr = 0.02 : f64}",
             lambda p: ref_opt.LAMB(p, lr=0.02, beta1=0.9, beta2=0.999,
                                    eps=1e-6, weight_decay=0.01)),
    # Without weight decay Apex takes no trust ratio, unless nvlamb.
    "lamb_plain": ("grove.lamb", "{lr = 0.02 : f64, weight_decay = 0.0 : f64}",
                   lambda p: ref_opt.LAMB(p, lr=0.02, beta1=0.9, beta2=0.999,
                                          eps=1e-6, weight_decay=0.0)),
    "lamb_nvlamb_clip_skip": ("grove.lamb",
                              "{lr = 0.02 : f64, beta1 = 0.8 : f64, "
                              "weight_decay = 0.0 : f64, nvlamb, "
                              "max_grad_norm = 1.0 : f64, skip_nonfinite}",
                              lambda p: ref_opt.LAMB(
                                  p, lr=0.02, beta1=0.8, beta2=0.999,
                                  eps=1e-6, weight_decay=0.0, nvlamb=True)),
    # Parameter groups in one op, clipped by one global norm: BERT's
    # decayed weights and undecayed biases, with a trust mask that differs
    # from LAMB's default on two params (fc1.bias trusted without decay,
    # fc2.weight decayed without trust).
    "lamb_groups_clip": ("grove.lamb",
                         "{lr = 0.02 : f64, max_grad_norm = 1.0 : f64, "
                         f"weight_decays = array<f64: {GROUP_DECAYS}>, "
                         f"trust_mask = array<i1: {GROUP_TRUST}>}}",
                         lambda p: ref_opt.LAMB(
                             p, lr=0.02, beta1=0.9, beta2=0.999, eps=1e-6,
                             weight_decays=DECAYS, trust_mask=TRUST)),
    "lans_groups_clip": ("grove.lans",
                         "{lr = 0.02 : f64, max_grad_norm = 1.0 : f64, "
                         f"weight_decays = array<f64: {GROUP_DECAYS}>, "
                         f"trust_mask = array<i1: {GROUP_TRUST}>}}",
                         lambda p: ref_opt.LANS(
                             p, lr=0.02, beta1=0.9, beta2=0.999, eps=1e-6,
                             weight_decays=DECAYS, trust_mask=TRUST)),
    "lans": ("grove.lans", "{lr = 0.02 : f64}",
             lambda p: ref_opt.LANS(p, lr=0.02, beta1=0.9, beta2=0.999,
                                    eps=1e-6, weight_decay=0.01)),
    "lans_clip_skip": ("grove.lans",
                       "{lr = 0.02 : f64, beta1 = 0.8 : f64, beta2 = 0.99 : f64,"
                       " weight_decay = 0.0 : f64, max_grad_norm = 1.0 : f64, "
                       "skip_nonfinite}",
                       lambda p: ref_opt.LANS(p, lr=0.02, beta1=0.8,
                                              beta2=0.99, eps=1e-6,
                                              weight_decay=0.0)),
    # The denominator starts at 0 (and stays there for the first period),
    # so epsilon bounds the first steps: at the default 1e-7 they are
    # ~3000 g, chaotic enough for f32 to part from the f64 reference on
    # some draws (seed 2333256662: 4e-2 relative after 20 steps).
    "adaalter": ("grove.adaalter",
                 "{lr = 0.05 : f64, epsilon = 1.0e-03 : f64, "
                 "weight_decay = 0.001 : f64}",
                 lambda p: ref_opt.AdaAlter(p, lr=0.05, eps=1e-3,
                                            weight_decay=0.001)),
    "adaalter_local_skip": ("grove.adaalter",
                            "{lr = 0.05 : f64, period = 3, "
                            "epsilon = 1.0e-02 : f64, skip_nonfinite}",
                            lambda p: ref_opt.AdaAlter(p, lr=0.05, eps=1e-2,
                                                       weight_decay=0.0,
                                                       period=3)),
    # Fully synchronous for the first 5 of the 20 steps (the denominator
    # catching up after each), then H = 4 counted from there: it catches up
    # at steps 9, 13 and 17 (not 8, 12, 16, 20).
    "adaalter_warmup": ("grove.adaalter",
                        "{lr = 0.05 : f64, period = 4, sync_warmup_steps = 5,"
                        " epsilon = 1.0e-02 : f64, weight_decay = 0.001 : f64}",
                        lambda p: ref_opt.AdaAlter(p, lr=0.05, eps=1e-2,
                                                   weight_decay=0.001,
                                                   period=4,
                                                   sync_warmup_steps=5)),
    # The learning rate from grove.lr_schedule over the step counter
    # (read before the update: 0 at the first step), as torch's
    # CosineAnnealingLR stepped after each update.
    "sgd_cosine": ("grove.sgd", "lr(%lr : tensor<{e}>) {momentum = 0.5 : f64}",
                   lambda p: torch.optim.SGD(p, lr=0.2, momentum=0.5),
                   lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(
                       opt, T_max=STEPS, eta_min=0.01),
                   "%t = grove.get_param @sgd.step : tensor<i64>\n"
                   "    %lr = grove.lr_schedule cosine %t {{lr = 0.2 : f64, "
                   "total_steps = 20, end_lr = 0.01 : f64}} "
                   ": tensor<i64> -> tensor<{e}>"),
}
# The step whose batch holds a NaN: a skipping optimizer changes nothing
# (torch: the step is not taken) and counts it in @<name>.skipped.
NAN_STEP = 7
SHAPES = {"fc1.weight": (16, 8), "fc1.bias": (16,), "fc2.weight": (4, 16),
          "fc2.bias": (4,), "unused": (3,)}


def source(name, op, attrs, e, schedule=""):
    T = lambda s: "tensor<" + "x".join(map(str, s)) + "x" + e + ">"
    params = "\n".join(f"  grove.param @{p} : {T(s)}"
                       for p, s in SHAPES.items())
    if schedule:
        # The counter the schedule reads, declared as the optimizer would.
        params += "\n  grove.param @sgd.step : tensor<i64> = 0 : i64"
    schedule = schedule.format(e=e)
    attrs = attrs.replace("{e}", e)
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
    {schedule}
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
    # GROVE_TEST_MODELS: a comma-separated subset of the model names (the
    # GPU check's bundle holds one per optimizer family).
    only = os.environ.get("GROVE_TEST_MODELS")
    chosen = {f"{c}_{e[0]}" for e in PRECISIONS for c in CONFIGS}
    if only:
        chosen &= set(only.split(","))
        assert chosen, f"GROVE_TEST_MODELS={only} names no model"
    models = {f"{c}_{e[0]}": Model(source(f"{c}_{e[0]}", spec[0], spec[1],
                                          e[0], *spec[4:]),
                                   name=f"{c}_{e[0]}")
              for e in PRECISIONS for c, spec in CONFIGS.items()
              if f"{c}_{e[0]}" in chosen}
    for e, dtype, rtol, atol in PRECISIONS:
        for config, (op, attrs, make, *sched) in CONFIGS.items():
            name = f"{config}_{e}"
            if name not in chosen:
                continue
            model = models[name]
            init = {p: (np.zeros(s) if p.endswith("bias") else
                        r.standard_normal(s) * 0.5).astype(dtype)
                    for p, s in SHAPES.items()}
            for p, v in init.items():
                model.set_weight(p, v)
            ref = {p: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                   for p, v in init.items()}
            opt = make(list(ref.values()))
            scheduler = sched[0](opt) if sched else None
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
                    norm = 0.5 if config == "sgd_clip_skip" else 1.0
                    torch.nn.utils.clip_grad_norm_(list(ref.values()), norm)
                opt.step()
                if scheduler:
                    scheduler.step()
                assert_close(loss, want.item(), rtol, atol,
                             f"{name} loss at step {step}")
            for p in SHAPES:
                assert_close(model.get_weight(p), ref[p].detach().numpy(), rtol,
                             atol, f"{name} {p} after {STEPS} steps")
            # The optimizer's state, under its safetensors names (torch's
            # slot names mapped to Grove's; the numpy references use
            # Grove's).
            prefix = op.split(".")[1]
            renamed = {"momentum_buffer": "momentum", "exp_avg": "m",
                       "exp_avg_sq": "v"}
            checked = 0
            for p, t in ref.items():
                for key, value in opt.state[t].items():
                    if value is None or key == "step":
                        continue
                    grove_name = f"{p}.{prefix}.{renamed.get(key, key)}"
                    value = value.numpy() if torch.is_tensor(value) else value
                    assert_close(model.get_weight(grove_name), value, rtol,
                                 atol, f"{name} {grove_name}")
                    checked += 1
            assert checked or config == "sgd", f"{name}: no state compared"
            skipped = 1 if "skip" in config else 0
            steps = model.get_weight(f"{prefix}.step")
            assert steps == STEPS - skipped, f"{name}: {prefix}.step {steps}"
            if skipped:
                assert model.get_weight(f"{prefix}.skipped") == 1, "skipped"
            print(f"{name}: {STEPS} steps match the reference")


if __name__ == "__main__":
    main()
