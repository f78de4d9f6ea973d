# RUN: %python %s
# The transformer ops compiled and run through the C ABI, forward, on fresh
# random inputs against PyTorch in float64 (gradients are autodiff.py's):
#  * grove.layer_norm over one and two trailing dimensions, dynamic rows:
#    f32 rtol 1e-5, atol 2e-5; rows far from zero (mean 1e3, spread 1,
#    where raw sums of squares cancel): atol 2e-3 (the f32 input's own
#    rounding is 6e-5 at 1e3, normalised by the spread); a constant row
#    gives the bias; bf16 (rows summed in f32): atol 0.05, against torch on
#    the bf16 input widened;
#  * grove.layer_norm_grad called directly with a dynamic row count,
#    against torch.autograd: rtol 1e-4, atol 1e-4;
#  * grove.gelu_tanh against F.gelu(approximate='tanh'): rtol 1e-5,
#    atol 1e-6;
#  * grove.embedding: rows exactly; an id computed in the model outside the
#    table reads zeros; an id argument outside [0, rows) fails the call
#    with GROVE_ERROR_INVALID_ARGUMENT naming the element, before it runs;
#  * grove.group_by_index exactly against numpy's stable argsort, with
#    out-of-range indices last;
#  * grove.attention over key tiles (130 keys in tiles of 48: a partial last
#    tile), dynamic batch, with a padding mask and causal, against PyTorch
#    in float64 (rtol 1e-5, atol 2e-6) and against the decomposed grove form
#    (all the scores, softmax, product) compiled beside it; bf16 (computed in
#    f32) within 0.02; a row whose keys are all masked is NaN, as in torch.
import ml_dtypes
import numpy as np
import torch
from grove_testing import GroveError, Model, assert_close, rng

F = torch.nn.functional
GROVE_ERROR_INVALID_ARGUMENT = 1
V, D = 11, 6
S = 130  # keys: two full tiles of 48 and a partial one

SOURCE = f"""
module @tfm {{
  func.func @ln1(%x: tensor<?x5x16xf32> {{grove.name = "x"}},
                 %g: tensor<16xf32> {{grove.name = "g"}},
                 %b: tensor<16xf32> {{grove.name = "b"}})
      -> (tensor<?x5x16xf32> {{grove.name = "y"}}) {{
    %y = grove.layer_norm %x, %g, %b {{epsilon = 1.0e-05 : f64}}
        : (tensor<?x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x5x16xf32>
    return %y : tensor<?x5x16xf32>
  }}
  func.func @ln2(%x: tensor<?x3x8xf32> {{grove.name = "x"}},
                 %g: tensor<3x8xf32> {{grove.name = "g"}},
                 %b: tensor<3x8xf32> {{grove.name = "b"}})
      -> (tensor<?x3x8xf32> {{grove.name = "y"}}) {{
    %y = grove.layer_norm %x, %g, %b {{epsilon = 1.0e-12 : f64}}
        : (tensor<?x3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<?x3x8xf32>
    return %y : tensor<?x3x8xf32>
  }}
  func.func @ln_bf16(%x: tensor<?x64xbf16> {{grove.name = "x"}},
                     %g: tensor<64xbf16> {{grove.name = "g"}},
                     %b: tensor<64xbf16> {{grove.name = "b"}})
      -> (tensor<?x64xbf16> {{grove.name = "y"}}) {{
    %y = grove.layer_norm %x, %g, %b : (tensor<?x64xbf16>, tensor<64xbf16>,
        tensor<64xbf16>) -> tensor<?x64xbf16>
    return %y : tensor<?x64xbf16>
  }}
  func.func @ln_grad(%dy: tensor<?x16xf32> {{grove.name = "dy"}},
                     %x: tensor<?x16xf32> {{grove.name = "x"}},
                     %g: tensor<16xf32> {{grove.name = "g"}})
      -> (tensor<?x16xf32> {{grove.name = "dx"}}, tensor<16xf32> {{grove.name = "dg"}},
          tensor<16xf32> {{grove.name = "db"}}) {{
    %dx, %dg, %db = grove.layer_norm_grad %dy, %x, %g {{epsilon = 1.0e-05 : f64}}
        : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<16xf32>)
        -> (tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>)
    return %dx, %dg, %db : tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>
  }}
  func.func @gelu(%x: tensor<?xf32> {{grove.name = "x"}})
      -> (tensor<?xf32> {{grove.name = "y"}}) {{
    %y = grove.gelu_tanh %x : tensor<?xf32>
    return %y : tensor<?xf32>
  }}
  func.func @lookup(%t: tensor<{V}x{D}xf32> {{grove.name = "table"}},
                    %ids: tensor<?x4xi32> {{grove.name = "ids"}})
      -> (tensor<?x4x{D}xf32> {{grove.name = "rows"}}) {{
    %e = grove.embedding %t, %ids : (tensor<{V}x{D}xf32>, tensor<?x4xi32>) -> tensor<?x4x{D}xf32>
    return %e : tensor<?x4x{D}xf32>
  }}
  // Ids computed in the model (gathered from an argument) are not checked
  // at the ABI: out of range, they read zeros.
  func.func @lookup_computed(%t: tensor<{V}x{D}xf32> {{grove.name = "table"}},
                             %ids: tensor<?xi32> {{grove.name = "ids"}},
                             %perm: tensor<?xi32> {{grove.name = "perm"}})
      -> (tensor<?x{D}xf32> {{grove.name = "rows"}}) {{
    %small = grove.slice %t [0, 0] [4, {D}] [1, 1] : tensor<{V}x{D}xf32> -> tensor<4x{D}xf32>
    %picked = grove.gather %ids, %perm : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %e = grove.embedding %small, %picked : (tensor<4x{D}xf32>, tensor<?xi32>) -> tensor<?x{D}xf32>
    return %e : tensor<?x{D}xf32>
  }}
  func.func @attn(%q: tensor<?x2x{S}x16xf32> {{grove.name = "q"}},
                  %k: tensor<?x2x{S}x16xf32> {{grove.name = "k"}},
                  %v: tensor<?x2x{S}x8xf32> {{grove.name = "v"}},
                  %m: tensor<?x1x1x{S}xf32> {{grove.name = "mask"}})
      -> (tensor<?x2x{S}x8xf32> {{grove.name = "o"}},
          tensor<?x2x{S}x8xf32> {{grove.name = "o_causal"}},
          tensor<?x2x{S}x8xf32> {{grove.name = "o_decomposed"}}) {{
    %o = grove.attention %q, %k, %v mask(%m : tensor<?x1x1x{S}xf32>) {{key_tile = 48 : i64}}
        : (tensor<?x2x{S}x16xf32>, tensor<?x2x{S}x16xf32>, tensor<?x2x{S}x8xf32>) -> tensor<?x2x{S}x8xf32>
    %c = grove.attention %q, %k, %v {{causal}}
        : (tensor<?x2x{S}x16xf32>, tensor<?x2x{S}x16xf32>, tensor<?x2x{S}x8xf32>) -> tensor<?x2x{S}x8xf32>
    // The decomposed form: all the scores, a softmax, a product.
    %qr = grove.reshape %q : tensor<?x2x{S}x16xf32> -> tensor<?x{S}x16xf32>
    %kr = grove.reshape %k : tensor<?x2x{S}x16xf32> -> tensor<?x{S}x16xf32>
    %vr = grove.reshape %v : tensor<?x2x{S}x8xf32> -> tensor<?x{S}x8xf32>
    %s = grove.matmul %qr, %kr {{transpose_rhs}} : (tensor<?x{S}x16xf32>, tensor<?x{S}x16xf32>) -> tensor<?x{S}x{S}xf32>
    %quarter = grove.constant dense<0.25> : tensor<f32>
    %ss = grove.mul %s, %quarter : (tensor<?x{S}x{S}xf32>, tensor<f32>) -> tensor<?x{S}x{S}xf32>
    %s4 = grove.reshape %ss : tensor<?x{S}x{S}xf32> -> tensor<?x2x{S}x{S}xf32>
    %sm = grove.add %s4, %m : (tensor<?x2x{S}x{S}xf32>, tensor<?x1x1x{S}xf32>) -> tensor<?x2x{S}x{S}xf32>
    %p = grove.softmax %sm {{axis = 3 : i64}} : tensor<?x2x{S}x{S}xf32>
    %p3 = grove.reshape %p : tensor<?x2x{S}x{S}xf32> -> tensor<?x{S}x{S}xf32>
    %d3 = grove.matmul %p3, %vr : (tensor<?x{S}x{S}xf32>, tensor<?x{S}x8xf32>) -> tensor<?x{S}x8xf32>
    %d = grove.reshape %d3 : tensor<?x{S}x8xf32> -> tensor<?x2x{S}x8xf32>
    return %o, %c, %d : tensor<?x2x{S}x8xf32>, tensor<?x2x{S}x8xf32>, tensor<?x2x{S}x8xf32>
  }}
  func.func @attn_bf16(%q: tensor<1x2x64x16xbf16> {{grove.name = "q"}},
                       %k: tensor<1x2x64x16xbf16> {{grove.name = "k"}},
                       %v: tensor<1x2x64x16xbf16> {{grove.name = "v"}})
      -> (tensor<1x2x64x16xbf16> {{grove.name = "o"}}) {{
    %o = grove.attention %q, %k, %v {{key_tile = 16 : i64}}
        : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16>
    return %o : tensor<1x2x64x16xbf16>
  }}
  func.func @group(%ids: tensor<?xi32> {{grove.name = "ids"}})
      -> (tensor<?xi32> {{grove.name = "order"}}, tensor<8xi32> {{grove.name = "offsets"}}) {{
    %o, %off = grove.group_by_index %ids {{num_groups = 7}}
        : tensor<?xi32> -> (tensor<?xi32>, tensor<8xi32>)
    return %o, %off : tensor<?xi32>, tensor<8xi32>
  }}
}}
"""

r = rng()
m = Model(SOURCE, name="tfm")
checks = 0


def torch_ln(x, g, b, dims, eps):
    t = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))
    return F.layer_norm(t(x), dims, t(g), t(b), eps).numpy()


# Layer norm over the last dimension and the last two, dynamic rows.
for n in (1, 3):
    x = r.standard_normal((n, 5, 16)).astype(np.float32) * 3 + 0.5
    g = r.standard_normal(16).astype(np.float32)
    b = r.standard_normal(16).astype(np.float32)
    (y,) = m.call("ln1", x, g, b)
    assert_close(y, torch_ln(x, g, b, (16,), 1e-5), 1e-5, 2e-5, "ln1")
    x2 = r.standard_normal((n, 3, 8)).astype(np.float32)
    g2 = r.standard_normal((3, 8)).astype(np.float32)
    b2 = r.standard_normal((3, 8)).astype(np.float32)
    (y2,) = m.call("ln2", x2, g2, b2)
    assert_close(y2, torch_ln(x2, g2, b2, (3, 8), 1e-12), 1e-5, 2e-5, "ln2")
    checks += 2

# Rows far from zero: shifted sums keep the variance.
x = (r.standard_normal((2, 5, 16)) + 1000.0).astype(np.float32)
(y,) = m.call("ln1", x, g, b)
assert_close(y, torch_ln(x, g, b, (16,), 1e-5), 0, 2e-3, "ln1 offset rows")
# A constant row normalises to zero: the output is the bias.
x = np.full((1, 5, 16), 3.25, np.float32)
(y,) = m.call("ln1", x, g, b)
assert_close(y, np.broadcast_to(b, y.shape), 0, 1e-6, "ln1 constant rows")
checks += 2

# bf16 rows, summed in f32.
bf = ml_dtypes.bfloat16
x = (r.standard_normal((4, 64)) * 2).astype(bf)
g = r.standard_normal(64).astype(bf)
b = r.standard_normal(64).astype(bf)
(y,) = m.call("ln_bf16", x, g, b)
want = torch_ln(x.astype(np.float64), g.astype(np.float64),
                b.astype(np.float64), (64,), 1e-5)
assert_close(y.astype(np.float64), want, 0.02, 0.05, "ln bf16")
checks += 1

# The fused gradient, called directly.
for n in (1, 7):
    x = r.standard_normal((n, 16)).astype(np.float32)
    g = r.standard_normal(16).astype(np.float32)
    dy = r.standard_normal((n, 16)).astype(np.float32)
    dx, dg, db = m.call("ln_grad", dy, x, g, num_outputs=3)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tg = torch.tensor(g, dtype=torch.float64, requires_grad=True)
    tb = torch.zeros(16, dtype=torch.float64, requires_grad=True)
    out = F.layer_norm(tx, (16,), tg, tb, 1e-5)
    want = torch.autograd.grad(out, [tx, tg, tb],
                               torch.tensor(dy, dtype=torch.float64))
    for got, w, what in zip((dx, dg, db), want, ("dx", "dg", "db")):
        assert_close(got, w.numpy(), 1e-4, 1e-4, f"ln_grad {what} n={n}")
    checks += 1

x = (r.standard_normal(257) * 4).astype(np.float32)
(y,) = m.call("gelu", x)
want = F.gelu(torch.tensor(x, dtype=torch.float64), approximate="tanh")
assert_close(y, want.numpy(), 1e-5, 1e-6, "gelu_tanh")
checks += 1

# Embedding rows, exactly; the ids argument is bounded by the table.
table = r.standard_normal((V, D)).astype(np.float32)
ids = r.integers(0, V, (3, 4)).astype(np.int32)
(rows,) = m.call("lookup", table, ids)
assert np.array_equal(rows, table[ids]), "embedding rows"
for value, where in ((V, 5), (-1, 0)):
    bad = ids.copy()
    bad.flat[where] = value
    try:
        m.call("lookup", table, bad)
        raise AssertionError(f"id {value} accepted")
    except GroveError as e:
        assert e.status == GROVE_ERROR_INVALID_ARGUMENT, e
        assert "'ids'" in e.message and f"is {value}, outside [0, {V})" in \
            e.message, e.message
computed = np.array([0, 3, 4, -2, 2, 9], np.int32)
# picked[i] = reversed[perm[i]] = computed[i].
perm = np.arange(len(computed), dtype=np.int32)[::-1].copy()
(rows,) = m.call("lookup_computed", table, computed[::-1].copy(), perm)
want = np.where(((computed >= 0) & (computed < 4))[:, None],
                table[np.clip(computed, 0, 3)], 0)
assert np.array_equal(rows, want), "computed ids out of range read zeros"
checks += 3

# Attention over key tiles against PyTorch (decomposed, float64) and
# against the decomposed grove form compiled beside it.
def attention_ref(q, k, v, mask=None, causal=False):
    t = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))
    s = t(q) @ t(k).transpose(-1, -2) * q.shape[-1] ** -0.5
    if mask is not None:
        s = s + t(mask)
    if causal:
        allowed = torch.ones(s.shape[-2], s.shape[-1]).tril().bool()
        s = s.masked_fill(~allowed, float("-inf"))
    return (torch.softmax(s, -1) @ t(v)).numpy()


for b in (1, 3):
    q = r.standard_normal((b, 2, S, 16)).astype(np.float32)
    k = r.standard_normal((b, 2, S, 16)).astype(np.float32)
    v = r.standard_normal((b, 2, S, 8)).astype(np.float32)
    mask = np.zeros((b, 1, 1, S), np.float32)
    mask[0, ..., S - 17:] = -1e4  # padding, BERT's additive mask
    o, oc, od = m.call("attn", q, k, v, mask, num_outputs=3)
    assert_close(o, attention_ref(q, k, v, mask), 1e-5, 2e-6, "attention")
    assert_close(oc, attention_ref(q, k, v, causal=True), 1e-5, 2e-6,
                 "attention causal")
    assert_close(o, od, 1e-5, 2e-6, "attention against its decomposed form")
    checks += 3
q, k, v = (r.standard_normal((1, 2, 64, 16)).astype(bf) for _ in range(3))
(o,) = m.call("attn_bf16", q, k, v)
assert_close(o.astype(np.float64), attention_ref(q, k, v), 0.02, 0.02,
             "attention bf16")
# A row whose every key is masked is NaN, as in torch.
q = r.standard_normal((1, 2, S, 16)).astype(np.float32)
k = r.standard_normal((1, 2, S, 16)).astype(np.float32)
v = r.standard_normal((1, 2, S, 8)).astype(np.float32)
mask = np.full((1, 1, 1, S), -np.inf, np.float32)
o, _, _ = m.call("attn", q, k, v, mask, num_outputs=3)
assert np.isnan(o).all(), "a fully masked row"
checks += 2

for n in (0, 1, 40):
    ids = r.integers(-2, 9, n).astype(np.int32)
    order, offsets = m.call("group", ids, num_outputs=2)
    key = np.where((ids >= 0) & (ids < 7), ids, 7)
    assert np.array_equal(order, np.argsort(key, kind="stable")), (ids, order)
    want = np.array([np.sum((ids >= 0) & (ids < g)) for g in range(8)])
    assert np.array_equal(offsets, want), (ids, offsets)
    checks += 1
print(f"transformer ops: {checks} checks passed")
