# RUN: %python %s
# LAMB's and LANS's norms over parameters large enough to be split into
# partial sums for the threads (grove-split-full-reductions) and merged
# with their siblings (grove-fuse-sibling-reductions: the norms of a
# parameter and of its update direction in one loop), and over one small
# enough to stay whole, against the float64 references
# (test/lib/reference_optimizers.py) over 5 steps of fresh random
# gradients: every param after each step within rtol 1e-5, atol 1e-6 (f32
# rounding; sums of 65536 squares reassociated).
import numpy as np
import reference_optimizers as ref_opt
import torch
from grove_testing import Model, assert_close, rng

SHAPES = {"w": (256, 256), "v": (131072,), "b": (300,)}
STEPS = 5
CONFIGS = {
    "lamb": ("{lr = 0.02 : f64, weight_decay = 0.01 : f64}",
             lambda p: ref_opt.LAMB(p, lr=0.02, beta1=0.9, beta2=0.999,
                                    eps=1e-6, weight_decay=0.01)),
    "lans": ("{lr = 0.02 : f64, weight_decay = 0.01 : f64}",
             lambda p: ref_opt.LANS(p, lr=0.02, beta1=0.9, beta2=0.999,
                                    eps=1e-6, weight_decay=0.01)),
}


def source(kind, attrs):
    T = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    lines = [f"module @norms_{kind} {{"]
    for n, s in SHAPES.items():
        lines += [f"  grove.param @{n} : {T(s)}",
                  f"  grove.param @d{n} : {T(s)}"]
    lines.append("  func.func @step() {")
    for n, s in SHAPES.items():
        lines.append(f"    %d{n} = grove.get_param @d{n} : {T(s)}")
    refs = ", ".join(f"@{n}" for n in SHAPES)
    grads = ", ".join(f"%d{n}" for n in SHAPES)
    types = ", ".join(T(s) for s in SHAPES.values())
    lines += [f"    grove.{kind} [{refs}] ({grads}) {attrs} : {types}",
              "    return", "  }", "}"]
    return "\n".join(lines)


def main():
    r = rng()
    for kind, (attrs, make) in CONFIGS.items():
        model = Model(source(kind, attrs), name=f"norms_{kind}")
        init = {n: r.standard_normal(s).astype(np.float32)
                for n, s in SHAPES.items()}
        for n, w in init.items():
            model.set_weight(n, w)
        ref = {n: torch.tensor(w, dtype=torch.float64, requires_grad=True)
               for n, w in init.items()}
        opt = make(list(ref.values()))
        for step in range(STEPS):
            for n, s in SHAPES.items():
                g = r.standard_normal(s).astype(np.float32)
                model.set_weight("d" + n, g)
                ref[n].grad = torch.tensor(g, dtype=torch.float64)
            model.call("step", num_outputs=0)
            opt.step()
            for n in SHAPES:
                assert_close(model.get_weight(n), ref[n].detach().numpy(),
                             1e-5, 1e-6, f"{kind} {n} after step {step + 1}")
        print(f"{kind}: {STEPS} steps of {', '.join(SHAPES)} equal the "
              "float64 reference")


if __name__ == "__main__":
    main()
