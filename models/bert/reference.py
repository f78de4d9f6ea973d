"""The BERT-style masked LM of generate.py in functional PyTorch, and BERT's
masking of a batch of token rows.

Written from the structure of Hugging Face's BertForMaskedLM (post-LN) and
MegatronBertForMaskedLM (pre-LN), not from generate.py's IR: params are a
dict named as generate.py names them (HF's state_dict without `bert.`; the
decoder reads the word embeddings, tied). No token types, pooler or NSP.
Attention keys holding `pad_id` get the extended mask's -10000, as HF does
for attention_mask 0.

Dropout is where BERT has it: the embeddings' output, each layer's
attention probabilities, attention output and feed-forward output (before
their residuals). By default it is off (eval mode: generate.py's
mlm_logits and mlm_loss). `dropout=fn` turns it on: `fn(x, where, layer)`
returns x after dropout at `where` (one of generate.DROPOUT_PLACES) in
`layer` (None for the embeddings). Grove's masks come from its Philox
generator, which torch cannot draw, so the caller gives them:
test/Integration/bert.py recomputes them from the seed, the offset and each
place's stream (generate.dropout_streams) and applies them here, to check
train_step.

    sys.path.insert(0, "models/bert"); import reference
    p = reference.load("bert.safetensors", torch.float64)
    loss = reference.mlm_loss(p, cfg, input_ids, positions, labels)

`cfg` is anything with generate.Config's fields (layers, heads, pre_ln,
act, layer_norm_eps, pad_id). Used by test/Integration/bert.py.

`LANS` is grove.lans in torch's _foreach ops (the float32 peer of
bench/train_step.py; test/lib/reference_optimizers.py holds the float64
transcription the tests check against).
"""
import math

import numpy as np
import torch
import torch.nn.functional as F


def load(path, dtype=torch.float64, requires_grad=False):
    """The params of a safetensors file as torch tensors of `dtype`."""
    from safetensors.numpy import load_file
    return from_numpy(load_file(path), dtype, requires_grad)


def from_numpy(arrays, dtype=torch.float64, requires_grad=False):
    return {k: torch.tensor(np.asarray(v), dtype=dtype,
                            requires_grad=requires_grad)
            for k, v in arrays.items()}


def activation(cfg, x):
    if cfg.act == "gelu":
        return F.gelu(x)                        # HF "gelu": the erf form
    return F.gelu(x, approximate="tanh")        # HF "gelu_pytorch_tanh"


def layer_norm(p, prefix, x, eps):
    # The normalized shape from the param's (static under tracing).
    return F.layer_norm(x, p[prefix + ".weight"].shape, p[prefix + ".weight"],
                        p[prefix + ".bias"], eps)


def linear(p, prefix, x):
    return F.linear(x, p[prefix + ".weight"], p[prefix + ".bias"])


def no_dropout(x, where, layer=None):
    """Eval mode: no dropout anywhere."""
    return x


def self_attention(p, prefix, x, extended_mask, heads, dropout=no_dropout,
                   layer=None):
    """BertSelfAttention: the context layer, before attention.output."""
    B, S, H = x.shape
    d = H // heads

    def split(t):  # [B, S, H] -> [B, heads, S, d]
        return t.view(B, S, heads, d).permute(0, 2, 1, 3)

    q = split(linear(p, prefix + ".query", x))
    k = split(linear(p, prefix + ".key", x))
    v = split(linear(p, prefix + ".value", x))
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
    probs = torch.softmax(scores + extended_mask, dim=-1)
    probs = dropout(probs, "attention probabilities", layer)
    context = torch.matmul(probs, v)
    return context.permute(0, 2, 1, 3).reshape(B, S, H)


def encoder_layer(p, cfg, i, x, extended_mask, dropout=no_dropout):
    L = f"encoder.layer.{i}"
    eps = cfg.layer_norm_eps

    def attention_output(a):
        return dropout(linear(p, L + ".attention.output.dense", a),
                       "attention output", i)

    def output(f):
        return dropout(linear(p, L + ".output.dense", f),
                       "feed-forward output", i)

    if cfg.pre_ln:  # MegatronBertLayer
        a = self_attention(p, L + ".attention.self",
                           layer_norm(p, L + ".attention.ln", x, eps),
                           extended_mask, cfg.heads, dropout, i)
        h = x + attention_output(a)
        f = activation(cfg, linear(p, L + ".intermediate.dense",
                                   layer_norm(p, L + ".ln", h, eps)))
        return h + output(f)
    a = self_attention(p, L + ".attention.self", x, extended_mask, cfg.heads,
                       dropout, i)
    h = layer_norm(p, L + ".attention.output.LayerNorm",
                   attention_output(a) + x, eps)
    f = activation(cfg, linear(p, L + ".intermediate.dense", h))
    return layer_norm(p, L + ".output.LayerNorm", output(f) + h, eps)


def _long(ids):
    """int64 ids; a tensor stays a tensor, so torch.onnx.export traces the
    ids as the graph's input rather than a constant."""
    if isinstance(ids, torch.Tensor):
        return ids.long()
    return torch.as_tensor(np.asarray(ids), dtype=torch.int64)


def hidden_states(p, cfg, input_ids, dropout=None, attention_mask=None):
    """The encoder's output [B, S, H] for int ids [B, S]; `dropout`: None
    (eval) or a function applying dropout (the module's docstring);
    `attention_mask` [B, S] (1 attend, 0 not), by default ids != pad_id
    (given, as Hugging Face's models take it, an export has it as an
    input)."""
    dropout = dropout or no_dropout
    ids = _long(input_ids)
    S = ids.shape[1]
    word = p["embeddings.word_embeddings.weight"]
    x = F.embedding(ids, word) + \
        p["embeddings.position_embeddings.weight"][:S].unsqueeze(0)
    if not cfg.pre_ln:
        x = layer_norm(p, "embeddings.LayerNorm", x, cfg.layer_norm_eps)
    x = dropout(x, "embeddings", None)
    if attention_mask is None:
        attention_mask = (ids != cfg.pad_id).to(word.dtype)
    extended = (1.0 - attention_mask)[:, None, None, :] * -10000.0
    for i in range(cfg.layers):
        x = encoder_layer(p, cfg, i, x, extended, dropout)
    if cfg.pre_ln:
        x = layer_norm(p, "encoder.ln", x, cfg.layer_norm_eps)
    return x


def mlm_logits(p, cfg, input_ids, positions, dropout=None,
               attention_mask=None):
    """The vocabulary logits [M, V] at the flat positions b * S + s."""
    h = hidden_states(p, cfg, input_ids, dropout, attention_mask)
    rows = h.reshape(-1, h.shape[-1])[_long(positions)]
    t = activation(cfg, linear(p, "cls.predictions.transform.dense", rows))
    t = layer_norm(p, "cls.predictions.transform.LayerNorm", t,
                   cfg.layer_norm_eps)
    return F.linear(t, p["embeddings.word_embeddings.weight"],
                    p["cls.predictions.bias"])


def mlm_loss(p, cfg, input_ids, positions, labels, dropout=None):
    """Mean cross-entropy over the masked positions (train_step's loss with
    `dropout`, mlm_loss's without)."""
    return F.cross_entropy(mlm_logits(p, cfg, input_ids, positions, dropout),
                           torch.as_tensor(np.asarray(labels),
                                           dtype=torch.int64))


def polynomial_lr(step, lr, warmup, total, end_lr=0.0, power=1.0):
    """Hugging Face's get_polynomial_decay_schedule_with_warmup at `step`
    (the steps taken before this one): lr * step / warmup during warm-up,
    then end + (lr - end) * (1 - progress)^power, held at end past total."""
    if step < warmup:
        return lr * step / warmup
    if step > total:
        return end_lr
    remaining = 1 - (step - warmup) / (total - warmup)
    return (lr - end_lr) * remaining ** power + end_lr


def masking(tokens, rng, vocab_size, mask_id=4, special_ids=(0, 1, 2, 3, 4),
            prob=0.15, max_predictions=None):
    """BERT's masked-LM inputs from token rows [B, S] (create_pretraining_data).

    In each row, n = max(1, round(prob * candidates)) positions (at most
    max_predictions) are drawn without replacement from the candidates,
    the tokens not in `special_ids` ([PAD], [UNK], [CLS], [SEP], [MASK]
    with the corpus's ids); a row without candidates gets none. Each drawn
    token becomes [MASK] with probability 0.8, a random token with 0.1
    (uniform over the ids below vocab_size not in special_ids) and stays
    with 0.1. `rng`: a numpy Generator.

    Returns (input_ids int32 [B, S], positions int32 [M], labels int32 [M]):
    the flat positions b * S + s in increasing order and the original
    tokens there.
    """
    tokens = np.asarray(tokens)
    B, S = tokens.shape
    special = np.asarray(sorted(special_ids))
    ordinary = np.setdiff1d(np.arange(vocab_size), special)
    ids = tokens.astype(np.int32).copy()
    positions = []
    for b in range(B):
        candidates = np.flatnonzero(~np.isin(tokens[b], special))
        if candidates.size == 0:
            continue
        n = max(1, int(round(prob * candidates.size)))
        if max_predictions is not None:
            n = min(n, max_predictions)
        chosen = np.sort(rng.choice(candidates, size=n, replace=False))
        for s in chosen:
            u = rng.random()
            if u < 0.8:
                ids[b, s] = mask_id
            elif u < 0.9:
                ids[b, s] = rng.choice(ordinary)
        positions.extend(b * S + chosen)
    positions = np.asarray(positions, dtype=np.int32)
    labels = tokens.reshape(-1)[positions].astype(np.int32)
    return ids, positions, labels


class LANS:
    """grove.lans (gluon-nlp's fused LANS, decoupled decay) over `params`
    with torch._foreach ops, in their dtype: per param, with t the steps
    taken including this one and the norms of g and p taken first,
    ĝ = g / (‖g‖ + ε) (g when ‖g‖ = 0), m = β1 m + (1 - β1) ĝ,
    v = β2 v + (1 - β2) ĝ², d = √(v / (1 - β2^t)) + ε,
    u_m = m / (1 - β1^t) / d + λ p, u_g = ĝ / d + λ p,
    r_x = lr ‖p‖ / ‖u_x‖ (lr when a norm is 0), p -= β1 r_m u_m
    + (1 - β1) r_g u_g. `weight_decays`: λ per param; the trust ratio
    applies to every param (generate.py's trust_mask). step(lr) reads
    each param's .grad (clipped or not by the caller) and overwrites it
    with ĝ. State: `m`, `v` (lists in params' order) and `t`."""

    def __init__(self, params, weight_decays, beta1=0.9, beta2=0.999,
                 eps=1e-6):
        self.params = list(params)
        self.wd = [float(w) for w in weight_decays]
        assert len(self.wd) == len(self.params)
        self.b1, self.b2, self.eps = beta1, beta2, eps
        with torch.no_grad():
            self.m = [torch.zeros_like(p) for p in self.params]
            self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr):
        self.t += 1
        b1, b2, eps, t = self.b1, self.b2, self.eps, self.t
        p = self.params
        g = [q.grad for q in p]
        gn = torch.stack(torch._foreach_norm(g)).tolist()
        pn = torch.stack(torch._foreach_norm(p)).tolist()
        torch._foreach_mul_(g, [1 / (n + eps) if n else 1.0 for n in gn])
        torch._foreach_mul_(self.m, b1)
        torch._foreach_add_(self.m, g, alpha=1 - b1)
        torch._foreach_mul_(self.v, b2)
        torch._foreach_addcmul_(self.v, g, g, value=1 - b2)
        d = torch._foreach_div(self.v, 1 - b2 ** t)
        torch._foreach_sqrt_(d)
        torch._foreach_add_(d, eps)
        decay = torch._foreach_mul(p, self.wd)
        um = torch._foreach_div(self.m, d)
        torch._foreach_mul_(um, 1 / (1 - b1 ** t))
        torch._foreach_add_(um, decay)
        ug = torch._foreach_div(g, d)
        torch._foreach_add_(ug, decay)
        un = torch.stack(torch._foreach_norm(um + ug)).tolist()
        k = len(p)

        def ratio(n_p, n_u):
            return lr * n_p / n_u if n_p and n_u else lr
        torch._foreach_mul_(um, [b1 * ratio(pn[i], un[i])
                                 for i in range(k)])
        torch._foreach_mul_(ug, [(1 - b1) * ratio(pn[i], un[k + i])
                                 for i in range(k)])
        torch._foreach_sub_(p, um)
        torch._foreach_sub_(p, ug)
