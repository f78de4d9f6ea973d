"""Float64 numpy transcriptions of the optimizers PyTorch does not ship.

Each reads its references' published update rule, not Grove's expansion:
  * LAMB: NVIDIA Apex's FusedLAMB (multi_tensor_lamb.cu, adam_w_mode, bias
    correction and gradient averaging on);
  * LANS: gluon-nlp's fused kernel (src/gluonnlp/torch/clib/
    multi_tensor_lans.cu, MOMENT_MODE_1);
  * AdaAlter: gluon-nlp's adaalter.py (period 1), and Local AdaAlter
    (B frozen between synchronisations) on one worker for a longer period,
    after `sync_warmup_steps` W fully synchronous ones (the authors'
    --warmup-steps: period 1 for t <= W, then the period counts from W).
LAMB and LANS take parameter groups as FusedLAMB's param_groups do, one
entry per param: `weight_decays` and `trust_mask` (whether the trust ratio
applies; LAMB's default is "decayed or nvlamb", LANS's always).
They take torch tensors (whose .grad the caller sets, clipped or not) and
update them in place, like torch.optim optimizers, keeping their state
under Grove's slot names in `state[param]`.
"""
import numpy as np


class _Optimizer:
    def __init__(self, params, **hyper):
        self.params = list(params)
        self.hyper = hyper
        self.state = {p: {} for p in self.params}
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.t += 1
        for i, p in enumerate(self.params):
            self.i = i
            w = p.detach().numpy()  # shares p's memory
            g = p.grad.detach().numpy().astype(np.float64)
            self.update(w, g, self.state[p])

    def group(self, default_trust):
        """The current param's weight decay and trust flag."""
        h = self.hyper
        wd = h["weight_decays"][self.i] if "weight_decays" in h \
            else h["weight_decay"]
        trust = h["trust_mask"][self.i] if "trust_mask" in h \
            else default_trust(wd)
        return wd, trust

    def slot(self, st, name, w):
        return st.setdefault(name, np.zeros_like(w, dtype=np.float64))


class _Adaptive(_Optimizer):
    def moments(self, w, g, st):
        """Adam's moments, updated in place; m and √(v / (1 - β2^t)) + ε."""
        h = self.hyper
        b1, b2 = h["beta1"], h["beta2"]
        m = self.slot(st, "m", w)
        v = self.slot(st, "v", w)
        m[...] = b1 * m + (1 - b1) * g
        v[...] = b2 * v + (1 - b2) * g * g
        return m, np.sqrt(v / (1 - b2 ** self.t)) + h["eps"]


def _norm(x):
    return float(np.sqrt(np.sum(np.square(x, dtype=np.float64))))


class LAMB(_Adaptive):
    def update(self, w, g, st):
        h = self.hyper
        b1 = h["beta1"]
        wd, trust = self.group(lambda wd: h.get("nvlamb", False) or wd != 0)
        m, d = self.moments(w, g, st)
        u = (m / (1 - b1 ** self.t)) / d + wd * w
        ratio = h["lr"]
        if trust:
            pn, un = _norm(w), _norm(u)
            if pn != 0 and un != 0:
                ratio = h["lr"] * pn / un
        w -= ratio * u


class LANS(_Adaptive):
    def update(self, w, g, st):
        h = self.hyper
        b1, eps = h["beta1"], h["eps"]
        wd, trust = self.group(lambda wd: True)
        gn, pn = _norm(g), _norm(w)
        if gn != 0:
            g = g / (gn + eps)
        m, d = self.moments(w, g, st)
        um = (m / (1 - b1 ** self.t)) / d + wd * w
        ug = g / d + wd * w

        def ratio(u):
            un = _norm(u)
            if not trust or pn == 0 or un == 0:
                return h["lr"]
            return h["lr"] * pn / un

        rm, rg = b1 * ratio(um), (1 - b1) * ratio(ug)
        w -= rm * um + rg * ug


class AdaAlter(_Optimizer):
    def update(self, w, g, st):
        h = self.hyper
        acc = self.slot(st, "accumulator", w)
        period = h.get("period", 1)
        warmup = h.get("sync_warmup_steps", 0)
        den = acc.copy() if period == 1 else self.slot(st, "denominator", w)
        w -= h["lr"] * (g / np.sqrt(den + h["eps"]) + h["weight_decay"] * w)
        acc += g * g
        # large_word_language_model_local_hvd.py: the warm-up's trainer
        # (interval 0, full_sync) adds g^2 to the history B it divides by;
        # at step W + 1 init_states() keeps B and starts the cache B' as a
        # copy of it, and the trainer's counter makes B = B' every H steps
        # from there.
        if period > 1 and (self.t <= warmup or
                           (self.t - warmup) % period == 0):
            den[...] = acc
