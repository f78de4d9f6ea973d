#!/usr/bin/env python3
"""Writes a BERT-style encoder with a masked-LM head in the grove dialect.

The module reads as if written by hand: named SSA values and one private
function per block (`@embeddings`, `@attention_mask`, `@self_attention`,
`@feed_forward`, `@layer_<i>`, `@encoder`, `@mlm_head`, `@masked_lm`), joined
by `func.call`s, which grovec inlines. The blocks are `grove.nn` blocks
(FuncBlock below), written through the `grove.ir` builder, so the params
are named by the blocks' paths, and their shapes and initializers come
from the same code as the IR. Three entries:

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

    python3 models/bert/generate.py --preset tiny --seq 128 --batch 32 \
        -o bert.mlir
    python3 models/bert/generate.py --preset tiny --init bert.safetensors \
        --seed 0
    build/bin/grovec bert.mlir -o out --weights=bert.safetensors

As a library: `generate(Config(...))` returns the module's text,
`build(cfg)` the `grove.ir.Module`, `param_specs(cfg)` the params in
declaration order, `init(cfg, seed)` the initial weights and
`dropout_streams(cfg)` the stream of each dropout.
"""
import argparse
import dataclasses
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import grove_path  # noqa: E402,F401  (grove: installed, else the tree's)
from grove import ir, nn  # noqa: E402

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
                raise ValueError(f"--{what.replace('_', '-')} must be "
                                 "positive")
        if self.hidden % self.heads:
            raise ValueError(f"--hidden {self.hidden} is not a multiple of "
                             f"--heads {self.heads}")
        if self.seq > self.max_positions:
            raise ValueError(f"--seq {self.seq} exceeds --max-positions "
                             f"{self.max_positions}")
        if not 0 <= self.pad_id < self.vocab:
            raise ValueError(f"--pad-id {self.pad_id} outside "
                             f"[0, {self.vocab})")
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
    """(name, shape) of every param, in declaration order: the order the
    blocks below first read them in."""
    return [(p.name, p.shape) for p in build(cfg).trainable_params()]


def is_layer_norm(name):
    return ".LayerNorm." in name or name.endswith(
        (".ln.weight", ".ln.bias")) or name.startswith("encoder.ln.")


def is_bias(name):
    return name.endswith(".bias")


def decays(cfg, name):
    """BERT decays every weight matrix and embedding table, and no bias or
    LayerNorm param."""
    return 0.0 if is_bias(name) or is_layer_norm(name) else \
        float(cfg.weight_decay)


def weight_decays(cfg):
    """Per param, in param_specs order (decays)."""
    return [decays(cfg, n) for n, _ in param_specs(cfg)]


def initializer(name):
    """BERT's draw for param `name`: LayerNorm weights 1, every bias 0,
    normal(0, 0.02) for weight matrices and embedding tables."""
    if is_layer_norm(name) and name.endswith(".weight"):
        return nn.Ones()
    if is_bias(name):
        return nn.Zeros()
    return nn.Normal(0.02)


def init(cfg, seed=0, path=None):
    """Initial weights as BERT draws them (initializer), in param_specs
    order from one generator. Returns {name: array}; writes safetensors to
    `path` if given."""
    m = build(cfg)
    weights = m.init_weights(seed)
    out = {p.name: weights[p.name] for p in m.trainable_params()}
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
# Blocks
# ---------------------------------------------------------------------------

def flt(x):
    """A number as the comments print it."""
    return repr(float(x))


def training_variants(cfg):
    """The functions with a training variant @<name>_train, which
    train_step calls: the blocks that hold a dropout, and those that call
    them. mlm_logits and mlm_loss call the others (eval)."""
    trained = set()
    if cfg.trainable and cfg.dropout:
        trained.add("embeddings")
    if cfg.trainable and cfg.attention_dropout:
        trained.add("self_attention")
    if trained:
        trained |= {f"layer_{i}" for i in range(cfg.layers)}
        trained |= {"encoder", "masked_lm"}
    return trained


class Dims:
    """cfg's sizes (the batch None when dynamic) and the types that recur
    in the functions' signatures."""

    def __init__(self, cfg):
        self.dtype = cfg.dtype
        self.B = None if cfg.batch == "?" else cfg.batch
        self.S, self.H, self.V = cfg.seq, cfg.hidden, cfg.vocab
        self.I, self.P = cfg.intermediate, cfg.max_positions
        self.heads, self.head_size = cfg.heads, cfg.head_size
        self.BS = None if self.B is None else self.B * self.S
        self.BH = None if self.B is None else self.B * self.heads
        self.hidden = self.t(self.B, self.S, self.H)
        self.mask = self.t(self.B, 1, 1, self.S)
        self.ids = ir.TensorType((self.B, self.S), "i32")
        self.positions = ir.TensorType((None,), "i32")

    def t(self, *shape):
        return ir.TensorType(shape, self.dtype)


def dense(b, x, w, bias, name):
    """x @ w^T + bias over the last dimension (a torch Linear, w [out, in]);
    the product is %<name>_mm."""
    return b.add(b.matmul(x, w, transpose_rhs=True, name=name + "_mm"), bias,
                 name=name)


def dropped(b, dropout, x):
    """x through the nn.Dropout `dropout` (in a training function only), as
    %<x>_dropped."""
    return dropout(b, x, name=x.name[1:] + "_dropped")


class FuncBlock(nn.Block):
    """A block of BERT written as a private function of its own, @<fn>,
    that its caller reaches by func.call (grovec inlines them): one function
    a block keeps the module readable as hand-written IR. Where
    training_variants says so there is also @<fn>_train, written with a
    training builder (its dropouts on), and called from training functions.
    Params are named by the block's path (nn.Block), as Hugging Face's
    state_dict names them, and read where the block needs them."""

    fn = None

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.dims = Dims(cfg)

    # What a subclass says: its arguments [(name, type)], its result type,
    # the comment above it (training variant or not) and its body
    # (forward(b, *args) -> result).
    def args(self):
        raise NotImplementedError

    def result(self):
        return self.dims.hidden

    def note(self, train):
        raise NotImplementedError

    @property
    def trained(self):
        return self.fn in training_variants(self.cfg)

    def define(self, m):
        """Writes @fn into module m, then @fn_train where it has one."""
        for train in (False, True) if self.trained else (False,):
            f = m.function(self.fn + ("_train" if train else ""),
                           self.args(), [self.result()], private=True,
                           training=train, comment=self.note(train))
            f.builder.ret(self.forward(f.builder, *f.args))

    def call(self, b, *args, name):
        """func.call of @fn, or of @fn_train from a training function."""
        fn = self.fn + ("_train" if b.training and self.trained else "")
        return b.call(fn, list(args), [self.result()], name=name)

    def get(self, b, path, shape, name):
        """This block's param `path` (declared on first use, with BERT's
        initializer), read as %name."""
        return b.get_param(self.declare(b, path, shape, initializer(
            self.param_name(path))), name=name)

    def layer_norm(self, b, x, path, short, name):
        """LayerNorm by this block's params `path`.weight and .bias (read as
        %<short>_w and %<short>_b)."""
        H = self.dims.H
        g = self.get(b, f"{path}.weight", (H,), short + "_w")
        bias = self.get(b, f"{path}.bias", (H,), short + "_b")
        return b.layer_norm(x, g, bias, self.cfg.layer_norm_eps, name=name)


class AttentionMask(FuncBlock):
    """BERT's additive attention mask from the ids."""

    fn = "attention_mask"

    def args(self):
        return [("input_ids", self.dims.ids)]

    def result(self):
        return self.dims.mask

    def note(self, train):
        return (f"BERT's additive attention mask: -10000 on the keys that are "
                f"[PAD] (id {self.cfg.pad_id}), 0 elsewhere,\nas a lookup in "
                "a constant [V, 1] table; [B, 1, 1, S] broadcasts over heads "
                "and queries.")

    def forward(self, b, ids):
        d, pad = self.dims, self.cfg.pad_id
        pieces = []
        if pad > 0:
            pieces.append(b.constant(0.0, d.t(pad, 1), name="not_pad_below"))
        pieces.append(b.constant(-10000.0, d.t(1, 1), name="pad"))
        if pad < d.V - 1:
            pieces.append(b.constant(0.0, d.t(d.V - 1 - pad, 1),
                                     name="not_pad_above"))
        table = pieces[0] if len(pieces) == 1 else \
            b.concat(pieces, 0, name="table")
        key_mask = b.embedding(table, ids, name="key_mask")
        return b.reshape(key_mask, (d.B, 1, 1, d.S), name="mask")


class Embeddings(FuncBlock):
    """Word plus position embeddings, LayerNorm (post-LN), dropout."""

    fn = "embeddings"

    def __init__(self, cfg):
        super().__init__(cfg)
        self.dropout = nn.Dropout(cfg.dropout, dropout_stream("embeddings"))

    def args(self):
        return [("input_ids", self.dims.ids)]

    def note(self, train):
        if train:
            return (f"@embeddings in training: dropout {flt(self.cfg.dropout)}"
                    f" on its output (stream {self.dropout.stream}).")
        return ("Word plus position embeddings (positions 0..S-1)" +
                ("" if self.cfg.pre_ln else ", then LayerNorm") + ".")

    def forward(self, b, ids):
        d = self.dims
        words_t = self.get(b, "word_embeddings.weight", (d.V, d.H),
                           "word_table")
        pos_t = self.get(b, "position_embeddings.weight", (d.P, d.H),
                         "position_table")
        words = b.embedding(words_t, ids, name="words")
        pos = pos_t if d.S == d.P else \
            b.slice(pos_t, [0, 0], [d.S, d.H], name="positions")
        out = b.add(words, pos, name="summed")
        if not self.cfg.pre_ln:
            out = self.layer_norm(b, out, "LayerNorm", "ln", name="normed")
        return dropped(b, self.dropout, out)


class SelfAttention(FuncBlock):
    """Multi-head self-attention before the output projection. Shared by
    the layers, so its weights are arguments (each layer reads its own and
    passes them)."""

    fn = "self_attention"

    def __init__(self, cfg):
        super().__init__(cfg)
        self.dropout = nn.Dropout(cfg.attention_dropout,
                                  dropout_stream("attention probabilities"))

    def args(self):
        d = self.dims
        out = [("x", d.hidden), ("mask", d.mask)]
        for p in ("query", "key", "value"):
            out += [(f"{p}_w", d.t(d.H, d.H)), (f"{p}_b", d.t(d.H))]
        return out

    def note(self, train):
        if train:
            st = self.dropout.stream
            return ("@self_attention in training: the attention in primitive "
                    "ops (grove.attention has no\ndropout inside), with "
                    f"dropout {flt(self.cfg.attention_dropout)} on the "
                    f"probabilities (stream {st}; grove-autodiff moves\nthe "
                    f"copy inlined for layer i to stream {st} + i * 2^32, so "
                    "layers draw apart).")
        return (f"Multi-head self-attention ({self.cfg.heads} heads of "
                f"{self.cfg.head_size}), before the output projection.")

    def forward(self, b, x, mask, *weights):
        heads = []
        for short, w, bias in zip("qkv", weights[::2], weights[1::2]):
            heads.append(self.split_heads(b, dense(b, x, w, bias, short),
                                          short))
        q, k, v = heads
        if self.cfg.decomposed_attention or (b.training and
                                             self.cfg.attention_dropout):
            ctx = self.decomposed(b, q, k, v, mask)
        else:
            ctx = b.attention(q, k, v, mask, name="context_heads")
        return self.merge_heads(b, ctx)

    def split_heads(self, b, x, what):
        """[B, S, H] -> [B, heads, S, head_size]."""
        d = self.dims
        x4 = b.reshape(x, (d.B, d.S, d.heads, d.head_size), name=what + "_4d")
        return b.transpose(x4, [0, 2, 1, 3], name=what + "_heads")

    def merge_heads(self, b, x):
        """[B, heads, S, head_size] -> [B, S, H]."""
        xt = b.transpose(x, [0, 2, 1, 3], name="context_bshd")
        return b.reshape(xt, (self.dims.B, self.dims.S, self.dims.H),
                         name="context")

    def decomposed(self, b, q, k, v, mask):
        """softmax(q k^T / sqrt(d) + mask) v per head in primitive ops: all
        the scores, a softmax, a product. grove.attention is the same tiled
        over the keys (grove-tile-attention), with no [B, heads, S, S]
        tensor; this form is the one the tests compare with
        (`decomposed_attention`), and the one a training function with
        attention dropout takes: grove.attention has no dropout inside, and
        here the probabilities exist to drop."""
        d = self.dims
        flat = (d.BH, d.S, d.head_size)
        q = b.reshape(q, flat, name="q_flat")
        k = b.reshape(k, flat, name="k_flat")
        v = b.reshape(v, flat, name="v_flat")
        scores = b.matmul(q, k, transpose_rhs=True, name="scores")
        scale = b.constant(1 / math.sqrt(d.head_size), d.t(), name="scale")
        scaled = b.mul(scores, scale, name="scaled")
        s4 = b.reshape(scaled, (d.B, d.heads, d.S, d.S), name="scores_4d")
        masked = b.add(s4, mask, name="masked")
        probs4 = b.softmax(masked, axis=3, name="probs_4d")
        probs4 = dropped(b, self.dropout, probs4)
        probs = b.reshape(probs4, (d.BH, d.S, d.S), name="probs")
        ctx = b.matmul(probs, v, name="context_flat")
        return b.reshape(ctx, (d.B, d.heads, d.S, d.head_size),
                         name="context_heads")


class FeedForward(FuncBlock):
    """The position-wise feed-forward; shared by the layers, its weights
    arguments as SelfAttention's."""

    fn = "feed_forward"

    def args(self):
        d = self.dims
        return [("x", d.hidden), ("in_w", d.t(d.I, d.H)), ("in_b", d.t(d.I)),
                ("out_w", d.t(d.H, d.I)), ("out_b", d.t(d.H))]

    def note(self, train):
        d = self.dims
        return (f"The position-wise feed-forward: dense {d.H} -> {d.I}, "
                f"{self.cfg.act}, dense {d.I} -> {d.H}.")

    def forward(self, b, x, in_w, in_b, out_w, out_b):
        inner = dense(b, x, in_w, in_b, "inner")
        activated = b.unary(self.cfg.act, inner, name="activated")
        return dense(b, activated, out_w, out_b, "out")


class Layer(FuncBlock):
    """Encoder layer i: its params (encoder.layer.<i>.*), the calls of the
    shared @self_attention and @feed_forward, the output projection,
    residuals and LayerNorms (post-LN or pre-LN), dropout."""

    def __init__(self, cfg, i, attention, feed_forward):
        super().__init__(cfg)
        self.i = i
        self.fn = f"layer_{i}"
        self.shared = (attention, feed_forward)  # called, not owned
        self.attended_dropout = nn.Dropout(
            cfg.dropout, dropout_stream("attention output", i))
        self.ffn_dropout = nn.Dropout(
            cfg.dropout, dropout_stream("feed-forward output", i))

    def args(self):
        return [("x", self.dims.hidden), ("mask", self.dims.mask)]

    def note(self, train):
        c, i = self.cfg, self.i
        if not train:
            how = "x + attention(LN(x)), then h + feed_forward(LN(h))" \
                if c.pre_ln else \
                "LN(x + attention(x)), then LN(h + feed_forward(h))"
            return f"Layer {i} ({'pre' if c.pre_ln else 'post'}-LN): {how}."
        note = f"@layer_{i} in training"
        if c.dropout:
            note += (f": dropout {flt(c.dropout)} on the attention output "
                     f"(stream {self.attended_dropout.stream}) and on the\n"
                     "feed-forward output (stream "
                     f"{self.ffn_dropout.stream})")
        if c.attention_dropout:
            note += ("," if c.dropout else "") + \
                " through @self_attention_train"
        return note + "."

    def attention(self, b, x, mask):
        d = self.dims
        attention, _ = self.shared
        ws = [x, mask]
        for p, short in (("query", "q"), ("key", "k"), ("value", "v")):
            ws += [self.get(b, f"attention.self.{p}.weight", (d.H, d.H),
                            short + "_w"),
                   self.get(b, f"attention.self.{p}.bias", (d.H,),
                            short + "_b")]
        ctx = attention.call(b, *ws, name="context")
        ow = self.get(b, "attention.output.dense.weight", (d.H, d.H), "o_w")
        ob = self.get(b, "attention.output.dense.bias", (d.H,), "o_b")
        return dropped(b, self.attended_dropout,
                       dense(b, ctx, ow, ob, "attended"))

    def feed_forward(self, b, x):
        d = self.dims
        _, feed_forward = self.shared
        ws = [x, self.get(b, "intermediate.dense.weight", (d.I, d.H), "in_w"),
              self.get(b, "intermediate.dense.bias", (d.I,), "in_b"),
              self.get(b, "output.dense.weight", (d.H, d.I), "out_w"),
              self.get(b, "output.dense.bias", (d.H,), "out_b")]
        return dropped(b, self.ffn_dropout,
                       feed_forward.call(b, *ws, name="ffn"))

    def forward(self, b, x, mask):
        if self.cfg.pre_ln:
            ln1 = self.layer_norm(b, x, "attention.ln", "ln1", name="ln1")
            h = b.add(x, self.attention(b, ln1, mask), name="h")
            ln2 = self.layer_norm(b, h, "ln", "ln2", name="ln2")
            return b.add(h, self.feed_forward(b, ln2), name="out")
        res = b.add(x, self.attention(b, x, mask), name="residual1")
        h = self.layer_norm(b, res, "attention.output.LayerNorm", "ln1",
                            name="h")
        res = b.add(h, self.feed_forward(b, h), name="residual2")
        return self.layer_norm(b, res, "output.LayerNorm", "ln2", name="out")


class Encoder(FuncBlock):
    """The layers in order (`layer`: their params are encoder.layer.<i>.*),
    then the final LayerNorm (pre-LN)."""

    fn = "encoder"

    def __init__(self, cfg):
        super().__init__(cfg)
        self.self_attention = SelfAttention(cfg)
        self.feed_forward = FeedForward(cfg)
        self.layer = nn.Sequential(*(
            Layer(cfg, i, self.self_attention, self.feed_forward)
            for i in range(cfg.layers)))

    def args(self):
        return [("x", self.dims.hidden), ("mask", self.dims.mask)]

    def note(self, train):
        c = self.cfg
        if train:
            return "@encoder in training, through each @layer_<i>_train."
        return (f"{c.layers} layer{'s' if c.layers > 1 else ''}" +
                (", then the final LayerNorm." if c.pre_ln else "."))

    def forward(self, b, x, mask):
        h = x
        for i in range(len(self.layer)):
            h = self.layer[i].call(b, h, mask, name=f"h{i}")
        if self.cfg.pre_ln:
            h = self.layer_norm(b, h, "ln", "ln", name="out")
        return h


class MLMHead(FuncBlock):
    """BERT's cls.predictions over the gathered rows; the decoder weight is
    the word embedding table (tied)."""

    fn = "mlm_head"

    def __init__(self, cfg, embeddings):
        super().__init__(cfg)
        self.tied = (embeddings,)  # its word table, not a child

    def args(self):
        return [("rows", self.dims.t(None, self.dims.H))]

    def result(self):
        return self.dims.t(None, self.dims.V)

    def note(self, train):
        return ("The masked-LM head: dense, activation, LayerNorm, then the "
                "decoder tied to the word\nembeddings, plus its own bias.")

    def forward(self, b, rows):
        H, V = self.dims.H, self.dims.V
        t = "predictions.transform."
        w = self.get(b, t + "dense.weight", (H, H), "w")
        bias = self.get(b, t + "dense.bias", (H,), "b")
        g = self.get(b, t + "LayerNorm.weight", (H,), "ln_w")
        beta = self.get(b, t + "LayerNorm.bias", (H,), "ln_b")
        dec = self.tied[0].get(b, "word_embeddings.weight", (V, H),
                               "decoder_w")
        dec_b = self.get(b, "predictions.bias", (V,), "decoder_b")
        x = dense(b, rows, w, bias, "transformed")
        x = b.unary(self.cfg.act, x, name="activated")
        x = b.layer_norm(x, g, beta, self.cfg.layer_norm_eps, name="normed")
        return dense(b, x, dec, dec_b, "logits")


class MaskedLM(FuncBlock):
    """The model, Hugging Face's BertForMaskedLM without its `bert.`
    prefix: embeddings, encoder, cls, and @masked_lm, which joins them."""

    fn = "masked_lm"

    def __init__(self, cfg):
        super().__init__(cfg)
        self.attention_mask = AttentionMask(cfg)
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        self.cls = MLMHead(cfg, self.embeddings)

    def blocks(self):
        """Every function's block, in the order the module lists them."""
        e = self.encoder
        return [self.attention_mask, self.embeddings, e.self_attention,
                e.feed_forward] + [e.layer[i] for i in range(len(e.layer))] + \
            [e, self.cls, self]

    def args(self):
        return [("input_ids", self.dims.ids),
                ("positions", self.dims.positions)]

    def result(self):
        return self.dims.t(None, self.dims.V)

    def note(self, train):
        if train:
            return "@masked_lm in training, through " + " and ".join(
                f"@{n}_train" for n in ("embeddings", "encoder")
                if n in training_variants(self.cfg)) + "."
        return ("The encoder, then the MLM head on the hidden states at the "
                "flat positions b*S + s\n(gathered first, so the vocabulary "
                "projection runs on the masked rows only).")

    def forward(self, b, ids, positions):
        d = self.dims
        mask = self.attention_mask.call(b, ids, name="mask")
        x = self.embeddings.call(b, ids, name="embedded")
        h = self.encoder.call(b, x, mask, name="hidden")
        flat = b.reshape(h, (d.BS, d.H), name="flat")
        rows = b.gather(flat, positions, name="rows")
        return self.cls.call(b, rows, name="logits")


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def header(cfg):
    c = cfg
    lines = [
        "A BERT-style encoder with a masked-LM head, written by "
        "models/bert/generate.py:",
        f"{c.layers} layers, hidden {c.hidden}, {c.heads} heads, "
        f"intermediate {c.intermediate}, {'pre' if c.pre_ln else 'post'}-LN, "
        f"{c.act},",
        f"sequence {c.seq}, vocabulary {c.vocab}, {c.max_positions} "
        f"positions, batch {c.batch}, {c.dtype}."]
    if not c.trainable:
        lines.append("No train_step: the gather of the masked rows "
                     "differentiates only with a static batch.")
    if dropout_streams(c):
        lines.append(f"Dropout in train_step only: hidden {flt(c.dropout)}, "
                     f"attention probabilities {flt(c.attention_dropout)}.")
    if c.autocast:
        lines += [f"Mixed precision: matmuls and attention in {c.autocast}, "
                  "norms, softmaxes and the loss in f32, params and",
                  "LANS in f32 (grove-autocast, docs/training.md)."]
    return "\n".join(lines)


def mlm_loss(b, model, ids, positions, labels, name):
    """The mean softmax cross-entropy of the logits at `positions`."""
    logits = model.call(b, ids, positions, name="logits")
    return b.softmax_cross_entropy(logits, labels, name=name)


def build(cfg):
    """The ir.Module of `cfg`: the blocks' functions, then the entries."""
    c = cfg
    attrs = {}
    if c.autocast:
        scale = ", loss_scale = 65536" if c.autocast == "f16" else ""
        attrs["grove.autocast"] = ir.Raw(
            f"#grove.autocast<compute = {c.autocast}{scale}>")
    m = ir.Module(c.name, header=header(c), attrs=attrs, dtype=c.dtype,
                  wrap_lists=True)
    model = MaskedLM(c)
    for block in model.blocks():
        block.define(m)

    d = model.dims
    args = [("input_ids", d.ids), ("positions", d.positions)]
    f = m.function("mlm_logits", args, [("logits", d.t(None, d.V))],
                   comment="Entry: the vocabulary logits at the given "
                   "positions.")
    f.builder.ret(model.call(f.builder, *f.args, name="logits"))

    args.append(("labels", d.positions))
    f = m.function("mlm_loss", args, [("loss", d.t())],
                   comment="Entry: the mean cross-entropy over the masked "
                   "positions.")
    f.builder.ret(mlm_loss(f.builder, model, *f.args, name="loss"))
    if not c.trainable:
        return m

    note = (f"Entry: one {OPTIMIZERS[c.optimizer]} step on the MLM loss, "
            "which it returns.\nWeight decay on the weight matrices and "
            "embeddings only; " + (
                "the trust ratio on every param;\n"
                if c.optimizer in ("lans", "lamb") else
                "one global gradient clip;\n") + "the rate warms up linearly "
            f"over {c.warmup} steps, then decays linearly to 0 at step "
            f"{c.total_steps}.")
    if training_variants(c):
        note += ("\nThe loss is @masked_lm_train's, with dropout: a mask a "
                 "place and a step, drawn from\n@dropout.seed (set it to "
                 "vary runs) and @dropout.offset, which each step advances "
                 "by one.")
    f = m.function("train_step", args, [("loss", d.t())], training=True,
                   comment=note)
    b = f.builder
    params = m.trainable_params()
    loss, grads = b.value_and_grad(
        params, lambda r: mlm_loss(r, model, *f.args, name="mlm_loss"),
        name="loss", grads_name="grads")
    step = m.param(f"{c.optimizer}.step", (), "i64", trainable=False,
                   initial=0, comment=f"The {OPTIMIZERS[c.optimizer]} step "
                   "counter, declared here because the schedule reads it.")
    lr = b.lr_schedule("polynomial", b.get_param(step, name="step"), c.dtype,
                       name="lr", lr=float(c.lr), warmup_steps=int(c.warmup),
                       total_steps=int(c.total_steps), end_lr=0.0, power=1.0)
    optimizer_step(b, c, params, grads, lr)
    b.ret(loss)
    return m


def optimizer_step(b, c, params, grads, lr):
    """The update of every param from its gradient at rate `lr`, with BERT's
    decay groups (decays) and one global clip of the gradients at
    c.max_grad_norm (torch.nn.utils.clip_grad_norm_ over all params).

    LANS and LAMB are one op each (per-param `weight_decays`, the trust ratio
    on every param). grove.adam has one weight_decay per op, so Adam and AdamW
    are two ops, the decayed params (state `@<opt>...`) and the others
    (`@<opt>_no_decay...`), after an explicit global clip (each op's own
    `max_grad_norm` would clip its group by the group's norm)."""
    moments = dict(beta1=float(c.beta1), beta2=float(c.beta2),
                   epsilon=float(c.epsilon))
    if c.optimizer in ("lans", "lamb"):
        b.optimizer(c.optimizer, params, grads, lr, **moments,
                    max_grad_norm=float(c.max_grad_norm),
                    weight_decays=[decays(c, p.name) for p in params],
                    trust_mask=ir.Raw("array<i1: " + ", ".join(
                        ["true"] * len(params)) + ">"))
        return
    if c.max_grad_norm > 0:
        total = None
        for g in grads:
            sq = b.mul(g, g, name="grad_sq")
            ss = b.reduce("sum", sq, range(g.type.rank), name="grad_ss")
            total = ss if total is None else \
                b.add(total, ss, name="grad_ss_sum")
        norm = b.unary("sqrt", total, name="grad_norm")
        scalar = ir.TensorType((), c.dtype)
        tiny = b.constant(1e-6, scalar, name="clip_eps")
        most = b.constant(c.max_grad_norm, scalar, name="max_norm")
        one = b.constant(1.0, scalar, name="one")
        den = b.add(norm, tiny, name="clip_den")
        ratio = b.div(most, den, name="clip_ratio")
        scale = b.minimum(ratio, one, name="clip_scale")
        grads = [b.mul(g, scale, name="clipped") for g in grads]
    plain = [is_bias(p.name) or is_layer_norm(p.name) for p in params]
    for group, decay in (("", c.weight_decay), ("_no_decay", 0.0)):
        idx = [i for i in range(len(params)) if plain[i] == (group != "")]
        b.optimizer("adam", [params[i] for i in idx], [grads[i] for i in idx],
                    lr, **moments, weight_decay=float(decay),
                    decoupled=c.optimizer == "adamw",
                    name=c.optimizer + group)


def generate(cfg):
    """The module's text."""
    return build(cfg).text()


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
                     optimizer=a.optimizer, autocast=a.autocast, lr=a.lr,
                     warmup=a.warmup,
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
