#!/usr/bin/env python3
"""Writes a BERT-style encoder with a masked-LM head in the grove dialect.

The module reads as if written by hand: named SSA values and one private
function per block (`@embeddings`, `@attention_mask`, `@self_attention`,
`@feed_forward`, `@layer_<i>`, `@encoder`, `@mlm_head`, `@masked_lm`), joined
by `func.call`s, which grovec inlines. Three entries:

* `mlm_logits(input_ids: i32[B, S], positions: i32[M]) -> logits [M, V]`:
  the vocabulary logits at the flat positions `b * S + s` (inference);
* `mlm_loss(input_ids, positions, labels: i32[M]) -> loss`: the mean
  softmax cross-entropy over those positions; writes no state;
* `train_step(input_ids, positions, labels) -> loss`: the same loss and its
  gradient w.r.t. every param (`grove.value_and_grad`), then one `grove.lans`
  over all params: per-param weight decays (none for biases and LayerNorm
  params, as BERT), the trust ratio on every param, one global
  `max_grad_norm` clip, and a learning rate from `grove.lr_schedule
  polynomial` (linear warm-up, then linear decay to 0) over `@lans.step`.
  `--optimizer lamb` makes it one `grove.lamb` (the same groups and clip);
  `adamw` / `adam` two `grove.adam` ops (decoupled decay or L2 on the
  decayed params, none on the others) after one explicit global clip, the
  schedule over `@adamw.step` / `@adam.step`.

Dropout (`--dropout`, BERT's hidden dropout on the embeddings' output, the
attention output and the feed-forward output; `--attention-dropout`, on the
attention probabilities) is in `train_step` only: `mlm_logits` and
`mlm_loss` are the model in eval mode. The blocks that hold a dropout, and
those that call them, get a training variant `@<block>_train` that
train_step calls; each place has its own `grove.dropout` `stream` (layers
apart too: `dropout_streams(cfg)` lists them), and all draw from
`@dropout.seed` and `@dropout.offset`, which each train_step advances by
one. `grove.attention` has no dropout inside, so with `--attention-dropout`
above 0 train_step's attention is the decomposed form (the [B, heads, S, S]
probabilities exist, forward and backward); the eval entries keep the
tiled op. At probability 0 the module is the same, byte for byte, as
without the options.

The masked rows are gathered from the [B*S, H] hidden states before the
MLM head (as BERT's TF code does), so the vocabulary projection runs on the
M masked rows only. Attention keys that are `[PAD]` (`--pad-id`) get BERT's
additive -10000 before the softmax. Params are named as Hugging Face's
BertForMaskedLM state_dict without its `bert.` prefix (post-LN), or as
MegatronBert's (pre-LN: `attention.ln`, `ln`, a final `encoder.ln`, no
embedding LayerNorm); Linear weights are [out, in], used with
`transpose_rhs`; the decoder weight is the word embedding table (tied).
There are no token-type embeddings (one segment), no pooler and no NSP head.
models/bert/reference.py is the same model in PyTorch; docs/bert.md, "Model",
describes it.

    python3 models/bert/generate.py --preset tiny --seq 128 --batch 32 -o bert.mlir
    python3 models/bert/generate.py --preset tiny --init bert.safetensors --seed 0
    build/bin/grovec bert.mlir -o out --weights=bert.safetensors

As a library: `generate(Config(...))` returns the module's text,
`param_specs(cfg)` the params in declaration order, `init(cfg, seed)`
the initial weights and `dropout_streams(cfg)` the stream of each dropout.
"""
import argparse
import dataclasses
import math
import sys

PRESETS = {  # layers, hidden, heads (BERT-tiny, -mini, -small)
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
}


# The optimizers train_step can end with, and their names in comments.
OPTIMIZERS = {"lans": "LANS", "lamb": "LAMB", "adamw": "AdamW", "adam": "Adam"}


@dataclasses.dataclass
class Config:
    layers: int = 2
    hidden: int = 128
    heads: int = 2
    intermediate: int = 0          # 0: 4 * hidden
    seq: int = 128
    vocab: int = 8192
    max_positions: int = 512
    batch: object = "?"            # an int, or "?" for a dynamic batch
    dtype: str = "f32"             # f32 | f64
    pre_ln: bool = False           # post-LN (BERT) by default
    act: str = "gelu"              # gelu (erf) | gelu_tanh
    layer_norm_eps: float = 1e-12
    pad_id: int = 0                # keys holding this id are masked
    dropout: float = 0.0           # hidden dropout (train_step only)
    attention_dropout: float = 0.0  # on the attention probabilities
    decomposed_attention: bool = False  # attention in primitive ops
    # Mixed precision for the whole module (#grove.autocast): "" (none),
    # "bf16" or "f16" (with dynamic loss scaling, 65536 to start).
    autocast: str = ""
    # The optimizer step (LANS unless `optimizer` says otherwise) and its
    # schedule.
    optimizer: str = "lans"        # lans | lamb | adamw | adam
    lr: float = 2e-3
    warmup: int = 100
    total_steps: int = 1000
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-6
    name: str = "bert"

    def __post_init__(self):
        if not self.intermediate:
            self.intermediate = 4 * self.hidden
        if self.batch != "?":
            self.batch = int(self.batch)
            if self.batch < 1:
                raise ValueError("--batch must be positive or ?")
        for what in ("layers", "hidden", "heads", "seq", "vocab",
                     "max_positions"):
            if getattr(self, what) < 1:
                raise ValueError(f"--{what.replace('_', '-')} must be positive")
        if self.hidden % self.heads:
            raise ValueError(f"--hidden {self.hidden} is not a multiple of "
                             f"--heads {self.heads}")
        if self.seq > self.max_positions:
            raise ValueError(f"--seq {self.seq} exceeds --max-positions "
                             f"{self.max_positions}")
        if not 0 <= self.pad_id < self.vocab:
            raise ValueError(f"--pad-id {self.pad_id} outside [0, {self.vocab})")
        if self.dtype not in ("f32", "f64"):
            raise ValueError("--dtype must be f32 or f64")
        if self.act not in ("gelu", "gelu_tanh"):
            raise ValueError("--act must be gelu or gelu_tanh")
        for what in ("dropout", "attention_dropout"):
            if not 0 <= getattr(self, what) < 1:
                raise ValueError(f"--{what.replace('_', '-')} must be in "
                                 "[0, 1)")
        if self.autocast not in ("", "bf16", "f16"):
            raise ValueError("--autocast must be bf16 or f16")
        if self.autocast and self.dtype != "f32":
            raise ValueError("--autocast needs --dtype f32 (the master "
                             "weights)")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"--optimizer must be one of "
                             f"{', '.join(OPTIMIZERS)}")
        if not 0 <= self.warmup < self.total_steps:
            raise ValueError("need 0 <= --warmup < --total-steps")

    @property
    def head_size(self):
        return self.hidden // self.heads

    def dropout_rate(self, where):
        """The dropout probability at `where` (one of DROPOUT_PLACES)."""
        if where == "attention probabilities":
            return self.attention_dropout
        return self.dropout

    @property
    def trainable(self):
        """train_step needs a static batch: the gather of the masked rows
        differentiates only with the hidden states' row count (B*S) known."""
        return self.batch != "?"


# ---------------------------------------------------------------------------
# Params
# ---------------------------------------------------------------------------

def param_specs(cfg):
    """(name, shape) of every param, in declaration order."""
    H, I, V = cfg.hidden, cfg.intermediate, cfg.vocab
    p = [("embeddings.word_embeddings.weight", (V, H)),
         ("embeddings.position_embeddings.weight", (cfg.max_positions, H))]
    if not cfg.pre_ln:
        p += [("embeddings.LayerNorm.weight", (H,)),
              ("embeddings.LayerNorm.bias", (H,))]
    for i in range(cfg.layers):
        L = f"encoder.layer.{i}"
        if cfg.pre_ln:
            p += [(f"{L}.attention.ln.weight", (H,)),
                  (f"{L}.attention.ln.bias", (H,))]
        for proj in ("query", "key", "value"):
            p += [(f"{L}.attention.self.{proj}.weight", (H, H)),
                  (f"{L}.attention.self.{proj}.bias", (H,))]
        p += [(f"{L}.attention.output.dense.weight", (H, H)),
              (f"{L}.attention.output.dense.bias", (H,))]
        if cfg.pre_ln:
            p += [(f"{L}.ln.weight", (H,)), (f"{L}.ln.bias", (H,))]
        else:
            p += [(f"{L}.attention.output.LayerNorm.weight", (H,)),
                  (f"{L}.attention.output.LayerNorm.bias", (H,))]
        p += [(f"{L}.intermediate.dense.weight", (I, H)),
              (f"{L}.intermediate.dense.bias", (I,)),
              (f"{L}.output.dense.weight", (H, I)),
              (f"{L}.output.dense.bias", (H,))]
        if not cfg.pre_ln:
            p += [(f"{L}.output.LayerNorm.weight", (H,)),
                  (f"{L}.output.LayerNorm.bias", (H,))]
    if cfg.pre_ln:
        p += [("encoder.ln.weight", (H,)), ("encoder.ln.bias", (H,))]
    p += [("cls.predictions.transform.dense.weight", (H, H)),
          ("cls.predictions.transform.dense.bias", (H,)),
          ("cls.predictions.transform.LayerNorm.weight", (H,)),
          ("cls.predictions.transform.LayerNorm.bias", (H,)),
          ("cls.predictions.bias", (V,))]
    return p


def is_layer_norm(name):
    return ".LayerNorm." in name or name.endswith(
        (".ln.weight", ".ln.bias")) or name.startswith("encoder.ln.")


def is_bias(name):
    return name.endswith(".bias")


def weight_decays(cfg):
    """Per param, in param_specs order: BERT decays every weight matrix and
    embedding table, and no bias or LayerNorm param."""
    return [0.0 if is_bias(n) or is_layer_norm(n) else cfg.weight_decay
            for n, _ in param_specs(cfg)]


def init(cfg, seed=0, path=None):
    """Initial weights as BERT draws them: normal(0, 0.02) for weight
    matrices and embedding tables, LayerNorm weights 1 and biases 0, every
    bias 0. Returns {name: array}; writes safetensors to `path` if given."""
    import numpy as np
    rng = np.random.default_rng(seed)
    dtype = np.float32 if cfg.dtype == "f32" else np.float64
    out = {}
    for name, shape in param_specs(cfg):
        if is_layer_norm(name) and name.endswith(".weight"):
            a = np.ones(shape)
        elif is_bias(name):
            a = np.zeros(shape)
        else:
            a = rng.normal(0.0, 0.02, shape)
        out[name] = a.astype(dtype)
    if path:
        from safetensors.numpy import save_file
        save_file(out, path)
    return out


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------

# BERT's four places, in the order train_step draws at them: the embeddings'
# output, then in each layer the attention probabilities, the attention's
# output projection and the feed-forward output (each before its residual).
DROPOUT_PLACES = ("embeddings", "attention probabilities", "attention output",
                  "feed-forward output")


def dropout_stream(where, layer=0):
    """The `stream` written on the grove.dropout at `where` in layer `layer`:
    0 for the embeddings, 1 for the attention probabilities (one op, in the
    shared @self_attention_train), 2 + 2i and 3 + 2i for layer i's
    attention output and feed-forward output."""
    if where == "embeddings":
        return 0
    if where == "attention probabilities":
        return 1
    return {"attention output": 2, "feed-forward output": 3}[where] + 2 * layer


def dropout_streams(cfg):
    """{(where, layer): (stream, rate)} of every mask train_step draws
    (layer None for the embeddings), with the stream it draws on: the
    attention probabilities' op is inlined once per layer, and grove-autodiff
    moves the i-th repeat to stream 1 + i * 2^32, so layers draw apart. All
    draw with @dropout.seed and @dropout.offset (the offset a train_step
    starts with): see grove.dropout."""
    out = {}
    if not cfg.trainable:
        return out
    if cfg.dropout:
        out[("embeddings", None)] = (dropout_stream("embeddings"), cfg.dropout)
    for i in range(cfg.layers):
        for where in DROPOUT_PLACES[1:]:
            rate = cfg.dropout_rate(where)
            if rate:
                stream = dropout_stream(where, i)
                if where == "attention probabilities":
                    stream += i << 32
                out[(where, i)] = (stream, rate)
    return out


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------

def flt(x):
    """An MLIR float literal (it needs a decimal point)."""
    s = repr(float(x))
    if "e" in s and "." not in s:
        s = s.replace("e", ".0e")
    elif "." not in s and "e" not in s and s not in ("inf", "-inf", "nan"):
        s += ".0"
    return s


def wrap(line, width=100):
    """Breaks a long line of IR: its types go on a continuation line, and
    what is still too long breaks after commas (continuations indented 4)."""
    if len(line) <= width or line.lstrip().startswith("//"):
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    cut = line.rfind(" : ")
    if cut > len(indent) and not line.lstrip().startswith("}"):
        return (wrap_commas(line[:cut], indent, width) +
                wrap_commas(indent + line[cut + 1:], indent, width))
    return wrap_commas(line, indent, width)


def wrap_commas(line, indent, width):
    out, cur = [], ""
    for piece in line.split(", "):
        cand = piece if not cur else cur + ", " + piece
        if cur and len(cand) + 1 > width:
            out.append(cur + ",")
            cur = indent + piece
        else:
            cur = cand
    return out + [cur]


def mul_dims(a, b):
    return "?" if "?" in (a, b) else a * b


class Func:
    """One function's body: named SSA values, made unique in it. `train`:
    the training variant (dropout on), whose calls go to the training
    variants of the callees that have one (`trained`)."""

    def __init__(self, cfg, train=False, trained=()):
        self.cfg = cfg
        self.train = train
        self.trained = trained
        self.lines = []
        self.used = set()

    def name(self, base):
        n, k = base, 1
        while n in self.used:
            n, k = f"{base}_{k}", k + 1
        self.used.add(n)
        return "%" + n

    def arg(self, base):
        return self.name(base)

    def op(self, base, text):
        v = self.name(base)
        self.lines.append(f"    {v} = {text}")
        return v

    def line(self, text):
        self.lines.append("    " + text)

    def t(self, *shape, dtype=None):
        return "tensor<" + "".join(f"{d}x" for d in shape) + (
            dtype or self.cfg.dtype) + ">"

    # The ops, with their types spelled out.
    def param(self, base, name, shape):
        return self.op(base, f"grove.get_param @{name} : {self.t(*shape)}")

    def dense(self, base, x, xshape, w, b, out):
        """x @ w^T + b over the last dimension (a torch Linear, w [out, in])."""
        yshape = xshape[:-1] + (out,)
        y = self.op(base + "_mm", f"grove.matmul {x}, {w} {{transpose_rhs}} : "
                    f"({self.t(*xshape)}, {self.t(out, xshape[-1])}) -> "
                    f"{self.t(*yshape)}")
        return self.op(base, f"grove.add {y}, {b} : ({self.t(*yshape)}, "
                       f"{self.t(out)}) -> {self.t(*yshape)}")

    def add(self, base, a, b, shape):
        ty = self.t(*shape)
        return self.op(base, f"grove.add {a}, {b} : ({ty}, {ty}) -> {ty}")

    def layer_norm(self, base, x, shape, g, b):
        H = shape[-1]
        return self.op(base, f"grove.layer_norm {x}, {g}, {b} {{epsilon = "
                       f"{flt(self.cfg.layer_norm_eps)} : f64}} : "
                       f"({self.t(*shape)}, {self.t(H)}, {self.t(H)}) -> "
                       f"{self.t(*shape)}")

    def reshape(self, base, x, src, dst):
        return self.op(base, f"grove.reshape {x} : {self.t(*src)} -> "
                       f"{self.t(*dst)}")

    def transpose(self, base, x, src, perm):
        dst = tuple(src[p] for p in perm)
        return self.op(base, f"grove.transpose {x} [{', '.join(map(str, perm))}]"
                       f" : {self.t(*src)} -> {self.t(*dst)}")

    def act(self, base, x, shape):
        return self.op(base, f"grove.{self.cfg.act} {x} : {self.t(*shape)}")

    def call(self, base, fn, args, arg_types, result_type):
        """A call of @fn, or of @fn_train from a training variant where fn
        has one."""
        if self.train and fn in self.trained:
            fn += "_train"
        return self.op(base, f"func.call @{fn}({', '.join(args)}) : "
                       f"({', '.join(arg_types)}) -> {result_type}")

    def dropout(self, x, shape, where, layer=0):
        """Where BERT applies dropout (`where`, one of DROPOUT_PLACES): one
        grove.dropout in a training variant with a rate above 0, with the
        place's own stream; `x` itself otherwise (eval)."""
        rate = self.cfg.dropout_rate(where)
        if not self.train or not rate:
            return x
        return self.op(x[1:] + "_dropped", f"grove.dropout {x} {{rate = "
                       f"{flt(rate)} : f64, stream = "
                       f"{dropout_stream(where, layer)} : i64}} : "
                       f"{self.t(*shape)}")


class Module:
    """The functions of the module, as text."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.funcs = []

    def func(self, name, args, result, f, private=True, comment=None,
             result_names=None):
        """Adds function `name` with the body written in Func `f`; args:
        [(ssa, type, ABI name or None)]; result: a type or a list of them
        (named by `result_names` on an entry)."""
        vis = "private " if private else ""
        sig = []
        for ssa, ty, abi in args:
            attr = f' {{grove.name = "{abi}"}}' if abi else ""
            sig.append(f"{ssa}: {ty}{attr}")
        res = result
        if result_names:
            res = "(" + ", ".join(f'{ty} {{grove.name = "{n}"}}' for ty, n in
                                  zip(result, result_names)) + ")"
        elif isinstance(result, (list, tuple)):
            res = "(" + ", ".join(result) + ")"
        text = []
        if comment:
            text += [f"  // {c}" for c in comment.split("\n")]
        joined = ", ".join(sig)
        text += wrap(f"  func.func {vis}@{name}({joined}) -> {res} {{")
        for line in f.lines:
            for part in line.split("\n"):
                text += wrap(part)
        text.append("  }")
        self.funcs.append("\n".join(text))


def split_heads(f, x, what):
    """[B, S, H] -> [B, heads, S, head_size]."""
    c = f.cfg
    B, S, nh, dh = c.batch, c.seq, c.heads, c.head_size
    x4 = f.reshape(f"{what}_4d", x, (B, S, c.hidden), (B, S, nh, dh))
    return f.transpose(f"{what}_heads", x4, (B, S, nh, dh), (0, 2, 1, 3))


def merge_heads(f, x):
    """[B, heads, S, head_size] -> [B, S, H]."""
    c = f.cfg
    B, S, nh, dh = c.batch, c.seq, c.heads, c.head_size
    xt = f.transpose("context_bshd", x, (B, nh, S, dh), (0, 2, 1, 3))
    return f.reshape("context", xt, (B, S, nh, dh), (B, S, c.hidden))


def scaled_dot_product_attention(f, q, k, v, mask):
    """softmax(q k^T / sqrt(d) + mask) v per head: one grove.attention.

    q, k, v: [B, heads, S, head_size]; mask: [B, 1, 1, S] (0 or -10000).
    The op is tiled over the keys (grove-tile-attention), so no [B, heads,
    S, S] tensor exists; `decomposed_attention` is the same in primitive
    ops, kept as the form the tests compare with. grove.attention has no
    dropout inside, so a training variant with attention dropout takes the
    decomposed form, whose probabilities exist to drop.
    """
    if f.cfg.decomposed_attention or (f.train and f.cfg.attention_dropout):
        return decomposed_attention(f, q, k, v, mask)
    c = f.cfg
    B, S, nh, dh = c.batch, c.seq, c.heads, c.head_size
    qkv = f.t(B, nh, S, dh)
    return f.op("context_heads",
                f"grove.attention {q}, {k}, {v} mask({mask} : "
                f"{f.t(B, 1, 1, S)}) : ({qkv}, {qkv}, {qkv}) -> {qkv}")


def decomposed_attention(f, q, k, v, mask):
    """grove.attention written out: all the scores, a softmax, a product."""
    c = f.cfg
    B, S, nh, dh = c.batch, c.seq, c.heads, c.head_size
    BH = mul_dims(B, nh)
    q = f.reshape("q_flat", q, (B, nh, S, dh), (BH, S, dh))
    k = f.reshape("k_flat", k, (B, nh, S, dh), (BH, S, dh))
    v = f.reshape("v_flat", v, (B, nh, S, dh), (BH, S, dh))
    qkv = f.t(BH, S, dh)
    scores = f.op("scores", f"grove.matmul {q}, {k} {{transpose_rhs}} : "
                  f"({qkv}, {qkv}) -> {f.t(BH, S, S)}")
    scale = f.op("scale", f"grove.constant dense<{flt(1 / math.sqrt(dh))}> : "
                 f"{f.t()}")
    scaled = f.op("scaled", f"grove.mul {scores}, {scale} : "
                  f"({f.t(BH, S, S)}, {f.t()}) -> {f.t(BH, S, S)}")
    s4 = f.reshape("scores_4d", scaled, (BH, S, S), (B, nh, S, S))
    masked = f.op("masked", f"grove.add {s4}, {mask} : ({f.t(B, nh, S, S)}, "
                  f"{f.t(B, 1, 1, S)}) -> {f.t(B, nh, S, S)}")
    probs4 = f.op("probs_4d", f"grove.softmax {masked} {{axis = 3 : i64}} : "
                  f"{f.t(B, nh, S, S)}")
    probs4 = f.dropout(probs4, (B, nh, S, S), "attention probabilities")
    probs = f.reshape("probs", probs4, (B, nh, S, S), (BH, S, S))
    ctx = f.op("context_flat", f"grove.matmul {probs}, {v} : "
               f"({f.t(BH, S, S)}, {qkv}) -> {qkv}")
    return f.reshape("context_heads", ctx, (BH, S, dh), (B, nh, S, dh))


def build(cfg):
    """The Module of `cfg`: every function, in the order they are written."""
    m = Module(cfg)
    c = cfg
    B, S, H, V, I = c.batch, c.seq, c.hidden, c.vocab, c.intermediate
    BS = mul_dims(B, S)
    t = Func(cfg).t
    hid, mask_t = t(B, S, H), t(B, 1, 1, S)
    ids_t, idx_t = t(B, S, dtype="i32"), t("?", dtype="i32")

    # Dropout is training only: the blocks with a dropout, and those that
    # call them, also get a training variant @<name>_train, which train_step
    # calls; mlm_logits and mlm_loss keep the deterministic ones (eval).
    trained = set()
    if c.trainable and c.dropout:
        trained.add("embeddings")
    if c.trainable and c.attention_dropout:
        trained.add("self_attention")
    if trained:
        trained |= {f"layer_{i}" for i in range(c.layers)}
        trained |= {"encoder", "masked_lm"}

    def variants(name):
        """(train, function name, Func) of block `name`, then of its
        training variant where it has one."""
        for train in (False, True) if name in trained else (False,):
            yield (train, name + "_train" if train else name,
                   Func(cfg, train, trained))

    # The additive attention mask from the ids.
    f = Func(cfg)
    ids = f.arg("input_ids")
    pieces, types = [], []
    if c.pad_id > 0:
        pieces.append(f.op("not_pad_below", f"grove.constant dense<0.0> : "
                           f"{t(c.pad_id, 1)}"))
        types.append(t(c.pad_id, 1))
    pieces.append(f.op("pad", f"grove.constant dense<-10000.0> : {t(1, 1)}"))
    types.append(t(1, 1))
    if c.pad_id < V - 1:
        pieces.append(f.op("not_pad_above", f"grove.constant dense<0.0> : "
                           f"{t(V - 1 - c.pad_id, 1)}"))
        types.append(t(V - 1 - c.pad_id, 1))
    table = pieces[0] if len(pieces) == 1 else f.op(
        "table", f"grove.concat {', '.join(pieces)} {{axis = 0 : i64}} : "
        f"({', '.join(types)}) -> {t(V, 1)}")
    add = f.op("key_mask", f"grove.embedding {table}, {ids} : ({t(V, 1)}, "
               f"{ids_t}) -> {t(B, S, 1)}")
    mask = f.reshape("mask", add, (B, S, 1), (B, 1, 1, S))
    f.line(f"return {mask} : {mask_t}")
    m.func("attention_mask", [(ids, ids_t, None)], mask_t, f,
           comment=f"BERT's additive attention mask: -10000 on the keys that "
           f"are [PAD] (id {c.pad_id}), 0 elsewhere,\n"
           "as a lookup in a constant [V, 1] table; [B, 1, 1, S] broadcasts "
           "over heads and queries.")

    # Embeddings.
    for train, name, f in variants("embeddings"):
        ids = f.arg("input_ids")
        words_t = f.param("word_table", "embeddings.word_embeddings.weight",
                          (V, H))
        pos_t = f.param("position_table",
                        "embeddings.position_embeddings.weight",
                        (c.max_positions, H))
        words = f.op("words", f"grove.embedding {words_t}, {ids} : "
                     f"({t(V, H)}, {ids_t}) -> {hid}")
        pos = pos_t if S == c.max_positions else f.op(
            "positions", f"grove.slice {pos_t} [0, 0] [{S}, {H}] [1, 1] : "
            f"{t(c.max_positions, H)} -> {t(S, H)}")
        summed = f.op("summed", f"grove.add {words}, {pos} : ({hid}, "
                      f"{t(S, H)}) -> {hid}")
        out = summed
        if not c.pre_ln:
            g = f.param("ln_w", "embeddings.LayerNorm.weight", (H,))
            b = f.param("ln_b", "embeddings.LayerNorm.bias", (H,))
            out = f.layer_norm("normed", summed, (B, S, H), g, b)
        out = f.dropout(out, (B, S, H), "embeddings")
        f.line(f"return {out} : {hid}")
        note = ("Word plus position embeddings (positions 0..S-1)" +
                ("" if c.pre_ln else ", then LayerNorm") + ".")
        if train:
            note = (f"@embeddings in training: dropout {flt(c.dropout)} on "
                    f"its output (stream {dropout_stream('embeddings')}).")
        m.func(name, [(ids, ids_t, None)], hid, f, comment=note)

    # Self-attention: projections, heads, attention, merged heads.
    for train, name, f in variants("self_attention"):
        x, msk = f.arg("x"), f.arg("mask")
        wb = {}
        args = [(x, hid, None), (msk, mask_t, None)]
        for p in ("query", "key", "value"):
            wb[p] = (f.arg(f"{p}_w"), f.arg(f"{p}_b"))
            args += [(wb[p][0], t(H, H), None), (wb[p][1], t(H), None)]
        heads = {}
        for p, short in (("query", "q"), ("key", "k"), ("value", "v")):
            proj = f.dense(short, x, (B, S, H), *wb[p], H)
            heads[p] = split_heads(f, proj, short)
        ctx = scaled_dot_product_attention(f, heads["query"], heads["key"],
                                           heads["value"], msk)
        out = merge_heads(f, ctx)
        f.line(f"return {out} : {hid}")
        note = (f"Multi-head self-attention ({c.heads} heads of "
                f"{c.head_size}), before the output projection.")
        if train:
            st = dropout_stream("attention probabilities")
            note = ("@self_attention in training: the attention in primitive "
                    "ops (grove.attention has no\ndropout inside), with "
                    f"dropout {flt(c.attention_dropout)} on the probabilities "
                    f"(stream {st}; grove-autodiff moves\nthe copy inlined "
                    f"for layer i to stream {st} + i * 2^32, so layers draw "
                    "apart).")
        m.func(name, args, hid, f, comment=note)

    # Feed-forward.
    f = Func(cfg)
    x = f.arg("x")
    w1, b1, w2, b2 = (f.arg("in_w"), f.arg("in_b"), f.arg("out_w"),
                      f.arg("out_b"))
    inner = f.dense("inner", x, (B, S, H), w1, b1, I)
    a = f.act("activated", inner, (B, S, I))
    out = f.dense("out", a, (B, S, I), w2, b2, H)
    f.line(f"return {out} : {hid}")
    m.func("feed_forward", [(x, hid, None), (w1, t(I, H), None),
                            (b1, t(I), None), (w2, t(H, I), None),
                            (b2, t(H), None)], hid, f,
           comment=f"The position-wise feed-forward: dense {H} -> {I}, "
           f"{c.act}, dense {I} -> {H}.")

    # Layers.
    att_types = [hid, mask_t] + [t(H, H), t(H)] * 3
    ffn_types = [hid, t(I, H), t(I), t(H, I), t(H)]
    for i, (train, name, f) in ((i, v) for i in range(c.layers)
                                for v in variants(f"layer_{i}")):
        x, msk = f.arg("x"), f.arg("mask")
        L = f"encoder.layer.{i}"

        def par(base, suffix, shape):
            return f.param(base, f"{L}.{suffix}", shape)

        def attention(inp):
            ws = [inp, msk]
            for p, s in (("query", "q"), ("key", "k"), ("value", "v")):
                ws += [par(f"{s}_w", f"attention.self.{p}.weight", (H, H)),
                       par(f"{s}_b", f"attention.self.{p}.bias", (H,))]
            ctx = f.call("context", "self_attention", ws, att_types, hid)
            ow = par("o_w", "attention.output.dense.weight", (H, H))
            ob = par("o_b", "attention.output.dense.bias", (H,))
            out = f.dense("attended", ctx, (B, S, H), ow, ob, H)
            return f.dropout(out, (B, S, H), "attention output", i)

        def feed_forward(inp):
            ws = [inp, par("in_w", "intermediate.dense.weight", (I, H)),
                  par("in_b", "intermediate.dense.bias", (I,)),
                  par("out_w", "output.dense.weight", (H, I)),
                  par("out_b", "output.dense.bias", (H,))]
            out = f.call("ffn", "feed_forward", ws, ffn_types, hid)
            return f.dropout(out, (B, S, H), "feed-forward output", i)

        if c.pre_ln:
            g = par("ln1_w", "attention.ln.weight", (H,))
            b = par("ln1_b", "attention.ln.bias", (H,))
            h = f.add("h", x, attention(f.layer_norm("ln1", x, (B, S, H), g,
                                                     b)), (B, S, H))
            g = par("ln2_w", "ln.weight", (H,))
            b = par("ln2_b", "ln.bias", (H,))
            out = f.add("out", h, feed_forward(
                f.layer_norm("ln2", h, (B, S, H), g, b)), (B, S, H))
            note = "x + attention(LN(x)), then h + feed_forward(LN(h))"
        else:
            res = f.add("residual1", x, attention(x), (B, S, H))
            g = par("ln1_w", "attention.output.LayerNorm.weight", (H,))
            b = par("ln1_b", "attention.output.LayerNorm.bias", (H,))
            h = f.layer_norm("h", res, (B, S, H), g, b)
            res = f.add("residual2", h, feed_forward(h), (B, S, H))
            g = par("ln2_w", "output.LayerNorm.weight", (H,))
            b = par("ln2_b", "output.LayerNorm.bias", (H,))
            out = f.layer_norm("out", res, (B, S, H), g, b)
            note = "LN(x + attention(x)), then LN(h + feed_forward(h))"
        f.line(f"return {out} : {hid}")
        note = f"Layer {i} ({'pre' if c.pre_ln else 'post'}-LN): {note}."
        if train:
            note = f"@layer_{i} in training"
            if c.dropout:
                note += (f": dropout {flt(c.dropout)} on the attention output "
                         f"(stream {dropout_stream('attention output', i)}) "
                         "and on the\nfeed-forward output (stream "
                         f"{dropout_stream('feed-forward output', i)})")
            if c.attention_dropout:
                note += ("," if c.dropout else "") + \
                    " through @self_attention_train"
            note += "."
        m.func(name, [(x, hid, None), (msk, mask_t, None)], hid, f,
               comment=note)

    # Encoder.
    for train, name, f in variants("encoder"):
        x, msk = f.arg("x"), f.arg("mask")
        h = x
        for i in range(c.layers):
            h = f.call(f"h{i}", f"layer_{i}", [h, msk], [hid, mask_t], hid)
        if c.pre_ln:
            g = f.param("ln_w", "encoder.ln.weight", (H,))
            b = f.param("ln_b", "encoder.ln.bias", (H,))
            h = f.layer_norm("out", h, (B, S, H), g, b)
        f.line(f"return {h} : {hid}")
        note = (f"{c.layers} layer{'s' if c.layers > 1 else ''}" +
                (", then the final LayerNorm." if c.pre_ln else "."))
        if train:
            note = "@encoder in training, through each @layer_<i>_train."
        m.func(name, [(x, hid, None), (msk, mask_t, None)], hid, f,
               comment=note)

    # MLM head over the gathered rows.
    f = Func(cfg)
    rows = f.arg("rows")
    tw = f.param("w", "cls.predictions.transform.dense.weight", (H, H))
    tb = f.param("b", "cls.predictions.transform.dense.bias", (H,))
    g = f.param("ln_w", "cls.predictions.transform.LayerNorm.weight", (H,))
    b = f.param("ln_b", "cls.predictions.transform.LayerNorm.bias", (H,))
    dec = f.param("decoder_w", "embeddings.word_embeddings.weight", (V, H))
    db = f.param("decoder_b", "cls.predictions.bias", (V,))
    x = f.dense("transformed", rows, ("?", H), tw, tb, H)
    x = f.act("activated", x, ("?", H))
    x = f.layer_norm("normed", x, ("?", H), g, b)
    logits = f.dense("logits", x, ("?", H), dec, db, V)
    f.line(f"return {logits} : {t('?', V)}")
    m.func("mlm_head", [(rows, t("?", H), None)], t("?", V), f,
           comment="The masked-LM head: dense, activation, LayerNorm, then "
           "the decoder tied to the word\nembeddings, plus its own bias.")

    # Logits at the masked positions.
    for train, name, f in variants("masked_lm"):
        ids, pos = f.arg("input_ids"), f.arg("positions")
        msk = f.call("mask", "attention_mask", [ids], [ids_t], mask_t)
        x = f.call("embedded", "embeddings", [ids], [ids_t], hid)
        h = f.call("hidden", "encoder", [x, msk], [hid, mask_t], hid)
        flat = f.reshape("flat", h, (B, S, H), (BS, H))
        rows = f.op("rows", f"grove.gather {flat}, {pos} : ({t(BS, H)}, "
                    f"{idx_t}) -> {t('?', H)}")
        logits = f.call("logits", "mlm_head", [rows], [t("?", H)], t("?", V))
        f.line(f"return {logits} : {t('?', V)}")
        note = ("The encoder, then the MLM head on the hidden states at the "
                "flat positions b*S + s\n(gathered first, so the vocabulary "
                "projection runs on the masked rows only).")
        if train:
            note = "@masked_lm in training, through " + " and ".join(
                f"@{n}_train" for n in ("embeddings", "encoder")
                if n in trained) + "."
        m.func(name, [(ids, ids_t, None), (pos, idx_t, None)], t("?", V), f,
               comment=note)

    def loss_of(f, ids, pos, labels, base="loss"):
        logits = f.call("logits", "masked_lm", [ids, pos], [ids_t, idx_t],
                        t("?", V))
        return f.op(base, f"grove.softmax_cross_entropy {logits}, {labels} "
                    f": ({t('?', V)}, {idx_t}) -> {t()}")

    # Entries.
    f = Func(cfg)
    ids, pos = f.arg("input_ids"), f.arg("positions")
    logits = f.call("logits", "masked_lm", [ids, pos], [ids_t, idx_t],
                    t("?", V))
    f.line(f"return {logits} : {t('?', V)}")
    m.func("mlm_logits", [(ids, ids_t, "input_ids"), (pos, idx_t, "positions")],
           [t("?", V)], f, private=False, result_names=["logits"],
           comment="Entry: the vocabulary logits at the given positions.")

    f = Func(cfg)
    ids, pos, lab = f.arg("input_ids"), f.arg("positions"), f.arg("labels")
    loss = loss_of(f, ids, pos, lab)
    f.line(f"return {loss} : {t()}")
    entry_args = [(ids, ids_t, "input_ids"), (pos, idx_t, "positions"),
                  (lab, idx_t, "labels")]
    m.func("mlm_loss", entry_args, [t()], f, private=False,
           result_names=["loss"],
           comment="Entry: the mean cross-entropy over the masked positions.")

    if cfg.trainable:
        specs = param_specs(cfg)
        f = Func(cfg)
        ids, pos, lab = f.arg("input_ids"), f.arg("positions"), f.arg("labels")
        n = len(specs)
        wrt = ", ".join(f"@{p}" for p, _ in specs)
        types = [t(*s) for _, s in specs]
        loss, grads = f.name("loss"), f.name("grads")
        f.line(f"{loss}, {grads}:{n} = grove.value_and_grad [{wrt}] {{")
        inner = Func(cfg, train=True, trained=trained)
        inner.used = f.used
        l = loss_of(inner, ids, pos, lab, "mlm_loss")
        f.lines += ["  " + s for s in inner.lines]
        f.line(f"  grove.yield {l} : {t()}")
        f.line(f"}} : {t()}, {', '.join(types)}")
        step = f.op("step", f"grove.get_param @{c.optimizer}.step : "
                    "tensor<i64>")
        lr = f.op("lr", f"grove.lr_schedule polynomial {step} {{lr = "
                  f"{flt(c.lr)} : f64, warmup_steps = {c.warmup}, total_steps = "
                  f"{c.total_steps}, end_lr = 0.0 : f64, power = 1.0 : f64}} : "
                  f"tensor<i64> -> {t()}")
        optimizer_step(f, c, specs, [f"{grads}#{i}" for i in range(n)], lr)
        f.line(f"return {loss} : {t()}")
        note = (f"Entry: one {OPTIMIZERS[c.optimizer]} step on the MLM "
                "loss, which it returns.\nWeight decay on the weight matrices "
                "and embeddings only; " + (
                    "the trust ratio on every param;\n"
                    if c.optimizer in ("lans", "lamb") else
                    "one global gradient clip;\n") + "the rate warms up "
                f"linearly over {c.warmup} steps, then decays linearly to 0 "
                f"at step {c.total_steps}.")
        if trained:
            note += ("\nThe loss is @masked_lm_train's, with dropout: a mask "
                     "a place and a step, drawn from\n@dropout.seed (set it "
                     "to vary runs) and @dropout.offset, which each step "
                     "advances by one.")
        m.func("train_step", entry_args, [t()], f, private=False,
               result_names=["loss"], comment=note)
    return m


def optimizer_step(f, c, specs, grads, lr):
    """The update of every param in `specs` from `grads` at rate `lr`, with
    BERT's decay groups (weight_decays) and one global clip of the gradients
    at c.max_grad_norm (torch.nn.utils.clip_grad_norm_ over all params).

    LANS and LAMB are one op each (per-param `weight_decays`, the trust ratio
    on every param). grove.adam has one weight_decay per op, so Adam and AdamW
    are two ops, the decayed params (state `@<opt>...`) and the others
    (`@<opt>_no_decay...`), after an explicit global clip (each op's own
    `max_grad_norm` would clip its group by the group's norm)."""
    t = f.t
    wrt = [f"@{p}" for p, _ in specs]
    types = [t(*s) for _, s in specs]
    if c.optimizer in ("lans", "lamb"):
        f.line(f"grove.{c.optimizer} [{', '.join(wrt)}] ({', '.join(grads)}) "
               f"lr({lr} : {t()}) {{beta1 = "
               f"{flt(c.beta1)} : f64, beta2 = {flt(c.beta2)} : f64, epsilon = "
               f"{flt(c.epsilon)} : f64, max_grad_norm = {flt(c.max_grad_norm)}"
               f" : f64,\n        weight_decays = array<f64: "
               f"{', '.join(flt(d) for d in weight_decays(c))}>,\n"
               f"        trust_mask = array<i1: {', '.join(['true'] * len(wrt))}>}}"
               f"\n        : {', '.join(types)}")
        return
    if c.max_grad_norm > 0:
        total = None
        for g, (_, shape) in zip(grads, specs):
            sq = f.op("grad_sq", f"grove.mul {g}, {g} : ({t(*shape)}, "
                      f"{t(*shape)}) -> {t(*shape)}")
            axes = ", ".join(str(i) for i in range(len(shape)))
            ss = f.op("grad_ss", f"grove.reduce_sum {sq} {{axes = array<i64: "
                      f"{axes}>}} : {t(*shape)} -> {t()}")
            total = ss if total is None else f.op(
                "grad_ss_sum", f"grove.add {total}, {ss} : ({t()}, {t()}) -> {t()}")
        norm = f.op("grad_norm", f"grove.sqrt {total} : {t()}")
        tiny = f.op("clip_eps", f"grove.constant dense<1.0e-06> : {t()}")
        most = f.op("max_norm", f"grove.constant dense<{flt(c.max_grad_norm)}> "
                    f": {t()}")
        one = f.op("one", f"grove.constant dense<1.0> : {t()}")
        den = f.op("clip_den", f"grove.add {norm}, {tiny} : ({t()}, {t()}) -> "
                   f"{t()}")
        ratio = f.op("clip_ratio", f"grove.div {most}, {den} : ({t()}, {t()}) "
                     f"-> {t()}")
        scale = f.op("clip_scale", f"grove.min {ratio}, {one} : ({t()}, {t()}) "
                     f"-> {t()}")
        grads = [f.op("clipped", f"grove.mul {g}, {scale} : ({t(*shape)}, "
                      f"{t()}) -> {t(*shape)}")
                 for g, (_, shape) in zip(grads, specs)]
    plain = [is_bias(p) or is_layer_norm(p) for p, _ in specs]
    for group, decay in (("", c.weight_decay), ("_no_decay", 0.0)):
        idx = [i for i in range(len(specs)) if plain[i] == (group != "")]
        flags = ", decoupled" if c.optimizer == "adamw" else ""
        f.line(f"grove.adam [{', '.join(wrt[i] for i in idx)}] "
               f"({', '.join(grads[i] for i in idx)}) lr({lr} : {t()}) "
               f"{{beta1 = {flt(c.beta1)} : f64, beta2 = {flt(c.beta2)} : f64, "
               f"epsilon = {flt(c.epsilon)} : f64, weight_decay = {flt(decay)} "
               f": f64{flags}, name = \"{c.optimizer}{group}\"}}\n"
               f"        : {', '.join(types[i] for i in idx)}")


def generate(cfg):
    """The module's text."""
    c = cfg
    m = build(cfg)
    layout = "pre-LN" if c.pre_ln else "post-LN"
    head = [
        "// A BERT-style encoder with a masked-LM head, written by "
        "models/bert/generate.py:",
        f"// {c.layers} layers, hidden {c.hidden}, {c.heads} heads, "
        f"intermediate {c.intermediate}, {layout}, {c.act},",
        f"// sequence {c.seq}, vocabulary {c.vocab}, {c.max_positions} "
        f"positions, batch {c.batch}, {c.dtype}.",
        f"module @{c.name} {{",
    ]
    if c.autocast:
        scale = ", loss_scale = 65536" if c.autocast == "f16" else ""
        head[-1:] = [
            "// Mixed precision: matmuls and attention in "
            f"{c.autocast}, norms, softmaxes and the loss in f32, params and",
            "// LANS in f32 (grove-autocast, docs/training.md).",
            f"module @{c.name} attributes {{grove.autocast = "
            f"#grove.autocast<compute = {c.autocast}{scale}>}} {{"]
    if dropout_streams(cfg):
        head.insert(3, f"// Dropout in train_step only: hidden {flt(c.dropout)}"
                    f", attention probabilities {flt(c.attention_dropout)}.")
    params = [f"  grove.param @{n} : {Func(cfg).t(*s)}"
              for n, s in param_specs(cfg)]
    if cfg.trainable:
        params += [f"  // The {OPTIMIZERS[c.optimizer]} step counter, declared "
                   "here because the schedule reads it.",
                   f"  grove.param @{c.optimizer}.step : tensor<i64> = 0 : i64"]
    else:
        head.insert(3, "// No train_step: the gather of the masked rows "
                    "differentiates only with a static batch.")
    body = "\n\n".join(m.funcs)
    return "\n".join(head + params) + "\n\n" + body + "\n}\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS),
                    help="layers, hidden and heads of BERT-tiny/mini/small")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--intermediate", type=int, default=0,
                    help="feed-forward size (default 4 * hidden)")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--max-positions", type=int, default=512)
    ap.add_argument("--batch", default="?",
                    help="a number, or ? for a dynamic batch (no train_step)")
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    ln = ap.add_mutually_exclusive_group()
    ln.add_argument("--pre-ln", dest="pre_ln", action="store_true")
    ln.add_argument("--post-ln", dest="pre_ln", action="store_false")
    ap.add_argument("--act", choices=["gelu", "gelu_tanh"], default="gelu")
    ap.add_argument("--layer-norm-eps", type=float, default=1e-12)
    ap.add_argument("--pad-id", type=int, default=0)
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="hidden dropout probability (BERT's "
                    "hidden_dropout_prob, 0.1 in BERT): the embeddings' "
                    "output, the attention output and the feed-forward "
                    "output, in train_step only")
    ap.add_argument("--attention-dropout", type=float, default=0.0,
                    help="dropout probability on the attention probabilities "
                    "(BERT's attention_probs_dropout_prob), in train_step "
                    "only; above 0, train_step's attention is the decomposed "
                    "form (grove.attention has no dropout inside), which "
                    "holds the [B, heads, S, S] probabilities")
    ap.add_argument("--decomposed-attention", action="store_true",
                    help="attention in primitive ops instead of "
                    "grove.attention (the form tests compare with)")
    ap.add_argument("--autocast", choices=["bf16", "f16"], default="",
                    help="mixed precision for the whole module "
                    "(#grove.autocast): matmuls and attention in bf16 or "
                    "f16, params and the optimizer in f32; f16 with dynamic "
                    "loss scaling")
    ap.add_argument("--optimizer", choices=list(OPTIMIZERS), default="lans",
                    help="train_step's update (Adam and AdamW: two grove.adam "
                    "ops, decayed and not, after one global clip)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--total-steps", type=int, default=1000)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-grad-norm", type=float, default=1.0)
    ap.add_argument("--name", default="bert", help="the module's name")
    ap.add_argument("-o", "--output", help="the .mlir (default stdout)")
    ap.add_argument("--init", metavar="FILE.safetensors",
                    help="also write initial weights there")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    layers, hidden, heads = PRESETS[a.preset] if a.preset else (2, 128, 2)
    try:
        cfg = Config(layers=a.layers or layers, hidden=a.hidden or hidden,
                     heads=a.heads or heads, intermediate=a.intermediate,
                     seq=a.seq, vocab=a.vocab, max_positions=a.max_positions,
                     batch=a.batch, dtype=a.dtype, pre_ln=a.pre_ln, act=a.act,
                     layer_norm_eps=a.layer_norm_eps, pad_id=a.pad_id,
                     dropout=a.dropout, attention_dropout=a.attention_dropout,
                     decomposed_attention=a.decomposed_attention,
                     optimizer=a.optimizer, autocast=a.autocast, lr=a.lr, warmup=a.warmup,
                     total_steps=a.total_steps, weight_decay=a.weight_decay,
                     max_grad_norm=a.max_grad_norm, name=a.name)
    except ValueError as e:
        ap.error(str(e))
    if not cfg.trainable:
        print("generate.py: --batch ? writes mlm_logits and mlm_loss only "
              "(train_step needs a static batch)", file=sys.stderr)
    text = generate(cfg)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.init:
        init(cfg, a.seed, a.init)


if __name__ == "__main__":
    main()
