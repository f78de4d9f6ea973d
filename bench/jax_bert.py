"""The BERT masked LM of models/bert/generate.py in jax.numpy, and LANS as
an optax GradientTransformation: the JAX jit peer bench/train_step.py
times against Grove's BERT train_step.

A transcription of models/bert/reference.py (post-LN, no dropout, no token
types, the decoder tied to the word embeddings, [PAD] keys masked with
-10000, the MLM head on the gathered masked rows). `p` maps generate.py's
param names to arrays; `cfg` has generate.Config's fields.

`compute` is the hook for mixed precision: with jnp.bfloat16 every matmul
(the dense layers, QK^T, PV and the decoder) takes bf16 inputs and
accumulates in f32 (preferred_element_type), the rest stays f32, as
torch.autocast does on the CPU; None keeps everything in the params' dtype.

`lans(...)` is grove.lans (gluon-nlp's fused LANS, decoupled decay; the
formula in models/bert/reference.py's LANS), per param: optax has LAMB but
no LANS (LAMB lacks the normalised gradient and the second, gradient-only
direction). `train_step(cfg)` chains optax.clip_by_global_norm with it
under the polynomial warm-up/decay schedule, as generate.py's train_step.
"""
import math

import jax
import jax.numpy as jnp
import optax


def mm(a, b, compute):
    """a @ b, with bf16 inputs and f32 accumulation when `compute` is set."""
    if compute is None:
        return a @ b
    return jnp.matmul(a.astype(compute), b.astype(compute),
                      preferred_element_type=a.dtype)


def linear(p, name, x, compute):
    return mm(x, p[name + ".weight"].T, compute) + p[name + ".bias"]


def layer_norm(p, name, x, eps):
    mean = x.mean(-1, keepdims=True)
    var = jnp.square(x - mean).mean(-1, keepdims=True)
    return ((x - mean) * jax.lax.rsqrt(var + eps) * p[name + ".weight"]
            + p[name + ".bias"])


def gelu(cfg, x):
    return jax.nn.gelu(x, approximate=cfg.act != "gelu")


def self_attention(p, name, x, mask, heads, compute):
    B, S, H = x.shape
    d = H // heads

    def split(t):  # [B, S, H] -> [B, heads, S, d]
        return t.reshape(B, S, heads, d).transpose(0, 2, 1, 3)

    q = split(linear(p, name + ".query", x, compute))
    k = split(linear(p, name + ".key", x, compute))
    v = split(linear(p, name + ".value", x, compute))
    scores = mm(q, k.transpose(0, 1, 3, 2), compute) / math.sqrt(d)
    probs = jax.nn.softmax(scores + mask, axis=-1)
    return mm(probs, v, compute).transpose(0, 2, 1, 3).reshape(B, S, H)


def mlm_logits(p, cfg, ids, positions, compute=None):
    assert not cfg.pre_ln, "jax_bert.py transcribes the post-LN model only"
    eps = cfg.layer_norm_eps
    S = ids.shape[1]
    word = p["embeddings.word_embeddings.weight"]
    x = word[ids] + p["embeddings.position_embeddings.weight"][:S][None]
    x = layer_norm(p, "embeddings.LayerNorm", x, eps)
    mask = jnp.where(ids == cfg.pad_id, -10000.0, 0.0).astype(x.dtype)
    mask = mask[:, None, None, :]
    for i in range(cfg.layers):
        L = f"encoder.layer.{i}"
        a = self_attention(p, L + ".attention.self", x, mask, cfg.heads,
                           compute)
        h = layer_norm(p, L + ".attention.output.LayerNorm",
                       linear(p, L + ".attention.output.dense", a, compute)
                       + x, eps)
        f = gelu(cfg, linear(p, L + ".intermediate.dense", h, compute))
        x = layer_norm(p, L + ".output.LayerNorm",
                       linear(p, L + ".output.dense", f, compute) + h, eps)
    rows = x.reshape(-1, x.shape[-1])[positions]
    t = gelu(cfg, linear(p, "cls.predictions.transform.dense", rows, compute))
    t = layer_norm(p, "cls.predictions.transform.LayerNorm", t, eps)
    return mm(t, word.T, compute) + p["cls.predictions.bias"]


def mlm_loss(p, cfg, ids, positions, labels, compute=None):
    z = mlm_logits(p, cfg, ids, positions, compute)
    return optax.softmax_cross_entropy_with_integer_labels(z, labels).mean()


def polynomial_lr(cfg):
    """reference.polynomial_lr (power 1, end 0) as an optax schedule of the
    steps taken before this one."""
    return optax.join_schedules(
        [optax.linear_schedule(0.0, cfg.lr, cfg.warmup),
         optax.linear_schedule(cfg.lr, 0.0, cfg.total_steps - cfg.warmup)],
        [cfg.warmup])


def lans(schedule, weight_decays, b1=0.9, b2=0.999, eps=1e-6):
    """grove.lans as an optax GradientTransformation (updates to add);
    `weight_decays`: a pytree of floats like the params."""
    def init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return (jnp.zeros([], jnp.int32), zeros,
                jax.tree_util.tree_map(jnp.zeros_like, params))

    def update(grads, state, params):
        count, m, v = state
        lr = schedule(count)
        t = (count + 1).astype(jnp.float32)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def one(g, p, m, v, wd):
            gn = jnp.linalg.norm(g)
            pn = jnp.linalg.norm(p)
            g = jnp.where(gn > 0, g / (gn + eps), g)
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            d = jnp.sqrt(v / c2) + eps
            um = m / c1 / d + wd * p
            ug = g / d + wd * p

            def ratio(u):
                un = jnp.linalg.norm(u)
                return jnp.where((pn > 0) & (un > 0), lr * pn / un, lr)
            return (-(b1 * ratio(um) * um + (1 - b1) * ratio(ug) * ug),
                    m, v)

        out = jax.tree_util.tree_map(one, grads, params, m, v, weight_decays)
        pick = lambda i: jax.tree_util.tree_map(  # noqa: E731
            lambda _, o: o[i], grads, out)
        return pick(0), (count + 1, pick(1), pick(2))

    return optax.GradientTransformation(init, update)


def optimizer(cfg, weight_decays):
    return optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm),
                       lans(polynomial_lr(cfg), weight_decays, cfg.beta1,
                            cfg.beta2, cfg.epsilon))


def train_step(cfg, opt, compute=None):
    """(params, opt_state, ids, positions, labels) -> (params, opt_state,
    loss), jitted with params and optimizer state donated."""
    def step(p, st, ids, positions, labels):
        loss, g = jax.value_and_grad(mlm_loss)(p, cfg, ids, positions,
                                               labels, compute)
        updates, st = opt.update(g, st, p)
        return optax.apply_updates(p, updates), st, loss
    return jax.jit(step, donate_argnums=(0, 1))
