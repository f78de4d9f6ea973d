"""The BERT-style masked LM of generate.py in functional PyTorch, and BERT's
masking of a batch of token rows.

Written from the structure of Hugging Face's BertForMaskedLM (post-LN) and
MegatronBertForMaskedLM (pre-LN), not from generate.py's IR: params are a
dict named as generate.py names them (HF's state_dict without `bert.`; the
decoder reads the word embeddings, tied). No token types, pooler or NSP;
every dropout is off (generate.py has none yet). Attention keys holding
`pad_id` get the extended mask's -10000, as HF does for attention_mask 0.

    sys.path.insert(0, "models/bert"); import reference
    p = reference.load("bert.safetensors", torch.float64)
    loss = reference.mlm_loss(p, cfg, input_ids, positions, labels)

`cfg` is anything with generate.Config's fields (layers, heads, pre_ln,
act, layer_norm_eps, pad_id). Used by test/Integration/bert.py.
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
    return F.layer_norm(x, x.shape[-1:], p[prefix + ".weight"],
                        p[prefix + ".bias"], eps)


def linear(p, prefix, x):
    return F.linear(x, p[prefix + ".weight"], p[prefix + ".bias"])


def self_attention(p, prefix, x, extended_mask, heads):
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
    context = torch.matmul(probs, v)
    return context.permute(0, 2, 1, 3).reshape(B, S, H)


def encoder_layer(p, cfg, i, x, extended_mask):
    L = f"encoder.layer.{i}"
    eps = cfg.layer_norm_eps
    if cfg.pre_ln:  # MegatronBertLayer
        a = self_attention(p, L + ".attention.self",
                           layer_norm(p, L + ".attention.ln", x, eps),
                           extended_mask, cfg.heads)
        h = x + linear(p, L + ".attention.output.dense", a)
        f = activation(cfg, linear(p, L + ".intermediate.dense",
                                   layer_norm(p, L + ".ln", h, eps)))
        return h + linear(p, L + ".output.dense", f)
    a = self_attention(p, L + ".attention.self", x, extended_mask, cfg.heads)
    h = layer_norm(p, L + ".attention.output.LayerNorm",
                   linear(p, L + ".attention.output.dense", a) + x, eps)
    f = activation(cfg, linear(p, L + ".intermediate.dense", h))
    return layer_norm(p, L + ".output.LayerNorm",
                      linear(p, L + ".output.dense", f) + h, eps)


def hidden_states(p, cfg, input_ids):
    """The encoder's output [B, S, H] for int ids [B, S]."""
    ids = torch.as_tensor(np.asarray(input_ids), dtype=torch.int64)
    S = ids.shape[1]
    word = p["embeddings.word_embeddings.weight"]
    x = F.embedding(ids, word) + \
        p["embeddings.position_embeddings.weight"][:S].unsqueeze(0)
    if not cfg.pre_ln:
        x = layer_norm(p, "embeddings.LayerNorm", x, cfg.layer_norm_eps)
    attention_mask = (ids != cfg.pad_id).to(word.dtype)
    extended = (1.0 - attention_mask)[:, None, None, :] * -10000.0
    for i in range(cfg.layers):
        x = encoder_layer(p, cfg, i, x, extended)
    if cfg.pre_ln:
        x = layer_norm(p, "encoder.ln", x, cfg.layer_norm_eps)
    return x


def mlm_logits(p, cfg, input_ids, positions):
    """The vocabulary logits [M, V] at the flat positions b * S + s."""
    h = hidden_states(p, cfg, input_ids)
    rows = h.reshape(-1, h.shape[-1])[
        torch.as_tensor(np.asarray(positions), dtype=torch.int64)]
    t = activation(cfg, linear(p, "cls.predictions.transform.dense", rows))
    t = layer_norm(p, "cls.predictions.transform.LayerNorm", t,
                   cfg.layer_norm_eps)
    return F.linear(t, p["embeddings.word_embeddings.weight"],
                    p["cls.predictions.bias"])


def mlm_loss(p, cfg, input_ids, positions, labels):
    """Mean cross-entropy over the masked positions."""
    return F.cross_entropy(mlm_logits(p, cfg, input_ids, positions),
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
