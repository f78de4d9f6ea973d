//===- Conv.cpp - The convolution service for generated host code ---------===//
//
// grove_rt_conv2d_f32 runs the convolutions convert-linalg-to-blas finds
// (linalg.conv_2d_nchw_fchw / conv_2d_ngchw_gfchw; a zero padding the
// compiler materialised is folded into the call's pads) on oneDNN's
// convolution primitive, which pads by itself. The layouts depend on the
// weights:
//  * weights that are one param the call only reads are reordered once
//    into the layout oneDNN prefers and kept across calls
//    (PreparedParams.h): its Winograd kernels for 3x3 unstrided ones (few
//    groups of whole 16-channel blocks, outputs of 14x14 and more; a group
//    at a time, since they take no groups, and on slices of the batch
//    where their scratchpad would be large), else its blocked direct ones;
//    only the input and result are reordered on each call. Generated code
//    calls the service for every f32 convolution with such weights but the
//    1x1 GEMMs on images over 7x7 (`conv-library-read-only-weights`, the
//    host's default).
//  * other weights (a train step's, or the first call at a version) are
//    reordered on every call: from two images on into oneDNN's blocked
//    layouts (16 channels a block on AVX-512) and its direct jit kernels,
//    which beat its brgconv ones on channels-last layouts once the reorders
//    are counted (docs/perf.md), for one image not at all (oneDNN's
//    GEMM-based convolution), since reordering the weights alone cost more than
//    the kernels saved. Generated code calls the service for such f32
//    convolutions on images of at most 28x28 outputs (`grovec
//    --conv-library-max-positions`), whose per-image im2col GEMMs are
//    narrow, and for all of them with `grovec --conv-library`: on larger
//    images the reorders take back what the kernels gain (docs/passes.md).
// A primitive is built once per shape and layout and kept (the
// GROVE_CONV_CACHE_SHAPES most recently used); the blocked buffers and the
// scratchpads come from the runtime's block cache.
// Builds without oneDNN run a direct loop nest (correct, slow).
//
//===----------------------------------------------------------------------===//

#include "Env.h"
#include "Error.h"
#include "Memory.h"
#include "PreparedParams.h"
#include "Tensor.h"
#include "Trace.h"

#include "grove/abi.h"

#if GROVE_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

using namespace grove::rt;

namespace {

/// An exploded 5-D memref: element (i0..i4) is base[Σ ik · st[k]].
struct View5 {
  float *base;
  int64_t size[5], stride[5];
};

void report(const char *service, const std::string &message,
            grove_status status = GROVE_ERROR_INTERNAL) {
  reportServiceError((std::string(service) + ": " + message).c_str(), status);
}

/// The convolution of x (N x G x Cg x H x W) with w (G x Fg x Cg x Kh x Kw)
/// into y (N x G x Fg x Oh x Ow), strides s, dilations d, zero padding
/// pt/pl/pb/pr (top, left, bottom, right).
struct Problem {
  View5 x, w, y;
  int64_t sh, sw, dh, dw;
  int64_t pt, pl, pb, pr;
};

/// Whether some operand has a zero-sized dimension (nothing to sum or
/// nothing to write).
bool hasZeroSize(const Problem &p) {
  for (const View5 *v : {&p.x, &p.w, &p.y})
    for (int64_t s : v->size)
      if (s == 0)
        return true;
  return false;
}

/// Checks what the shapes must satisfy; reports as `service` and returns
/// false if not. `w` and `y` name p.w and p.y in the message.
bool check(const Problem &p, const char *service, const char *wName = "weights",
           const char *yName = "result") {
  auto fail = [&](const std::string &message) { report(service, message); };
  const View5 &x = p.x, &w = p.w, &y = p.y;
  for (const View5 *v : {&x, &w, &y})
    for (int64_t s : v->size)
      if (s < 0)
        return fail("negative size"), false;
  if (p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1)
    return fail("strides and dilations must be positive"), false;
  if (p.pt < 0 || p.pl < 0 || p.pb < 0 || p.pr < 0)
    return fail("padding must not be negative"), false;
  auto describe = [](const View5 &v) {
    std::string s;
    for (int i = 0; i < 5; ++i)
      s += (i ? "x" : "") + std::to_string(v.size[i]);
    return s;
  };
  bool ok = w.size[0] == x.size[1] && w.size[2] == x.size[2] &&
            y.size[0] == x.size[0] && y.size[1] == x.size[1] &&
            y.size[2] == w.size[1];
  // The rows and columns the output reads must exist in the padded input.
  ok =
      ok && (y.size[3] == 0 || (y.size[3] - 1) * p.sh + (w.size[3] - 1) * p.dh <
                                   x.size[3] + p.pt + p.pb);
  ok =
      ok && (y.size[4] == 0 || (y.size[4] - 1) * p.sw + (w.size[4] - 1) * p.dw <
                                   x.size[4] + p.pl + p.pr);
  if (!ok)
    return fail("shape mismatch: input " + describe(x) + ", " + wName + " " +
                describe(w) + ", " + yName + " " + describe(y)),
           false;
  // A view with elements needs its buffer, even where the problem is
  // empty (no images: a weight gradient of zeros is still written).
  for (const View5 *v : {&x, &w, &y})
    if (!v->base &&
        std::all_of(v->size, v->size + 5, [](int64_t n) { return n > 0; }))
      return fail("a buffer is NULL"), false;
  return true;
}

/// Element (i0..i4) of `v`.
float &at(const View5 &v, int64_t i0, int64_t i1, int64_t i2, int64_t i3,
          int64_t i4) {
  return v.base[i0 * v.stride[0] + i1 * v.stride[1] + i2 * v.stride[2] +
                i3 * v.stride[3] + i4 * v.stride[4]];
}

/// Calls `body(x, w, y)` with the elements of every product the
/// convolution `p` sums (padding's zeros left out): the loops of both
/// services, in builds without oneDNN and for empty problems.
template <typename Body> void forEachProduct(const Problem &p, Body body) {
  const View5 &x = p.x, &w = p.w, &y = p.y;
  for (int64_t n = 0; n < y.size[0]; ++n)
    for (int64_t g = 0; g < y.size[1]; ++g)
      for (int64_t f = 0; f < y.size[2]; ++f)
        for (int64_t oh = 0; oh < y.size[3]; ++oh)
          for (int64_t ow = 0; ow < y.size[4]; ++ow)
            for (int64_t c = 0; c < w.size[2]; ++c)
              for (int64_t i = 0; i < w.size[3]; ++i)
                for (int64_t j = 0; j < w.size[4]; ++j) {
                  int64_t ih = oh * p.sh + i * p.dh - p.pt;
                  int64_t iw = ow * p.sw + j * p.dw - p.pl;
                  if (ih < 0 || ih >= x.size[3] || iw < 0 || iw >= x.size[4])
                    continue; // a zero of the padding
                  body(at(x, n, g, c, ih, iw), at(w, g, f, c, i, j),
                       at(y, n, g, f, oh, ow));
                }
}

/// Sets every element of `v` to zero.
void zero(const View5 &v) {
  for (int64_t a = 0; a < v.size[0]; ++a)
    for (int64_t b = 0; b < v.size[1]; ++b)
      for (int64_t c = 0; c < v.size[2]; ++c)
        for (int64_t d = 0; d < v.size[3]; ++d)
          for (int64_t e = 0; e < v.size[4]; ++e)
            at(v, a, b, c, d, e) = 0.0f;
}

/// The convolution's loops (the reference semantics).
void convLoops(const Problem &p) {
  zero(p.y);
  forEachProduct(p, [](float x, float &w, float &y) { y += x * w; });
}

/// The weight gradient's loops (p.w is dw, p.y is dy).
void weightGradLoops(const Problem &p) {
  zero(p.w);
  forEachProduct(p, [](float x, float &dw, float &dy) { dw += x * dy; });
}

#if GROVE_HAVE_DNNL
using namespace dnnl;

/// x or y as oneDNN's 4-D N x C x H x W: the group and channel dimensions
/// merge when their strides allow (always, for buffers the compiler made);
/// false otherwise. Only the rows and columns in `rows`, `cols` are seen.
bool asNchw(const View5 &v, int64_t rows, int64_t cols, memory::desc &out) {
  if (v.size[1] > 1 && v.size[2] > 1 && v.stride[1] != v.size[2] * v.stride[2])
    return false;
  int64_t channelStride = v.size[2] > 1 ? v.stride[2] : v.stride[1];
  out = memory::desc({v.size[0], v.size[1] * v.size[2], rows, cols},
                     memory::data_type::f32,
                     {v.stride[0], channelStride, v.stride[3], v.stride[4]});
  return true;
}

/// Weights as oneDNN's G x Fg x Cg x Kh x Kw (or F x C x Kh x Kw).
memory::desc weightsDesc(const View5 &w) {
  if (w.size[0] == 1)
    return memory::desc({w.size[1], w.size[2], w.size[3], w.size[4]},
                        memory::data_type::f32,
                        {w.stride[1], w.stride[2], w.stride[3], w.stride[4]});
  return memory::desc(
      {w.size[0], w.size[1], w.size[2], w.size[3], w.size[4]},
      memory::data_type::f32,
      {w.stride[0], w.stride[1], w.stride[2], w.stride[3], w.stride[4]});
}

/// The primitives of one shape and layout: the convolution in the layouts
/// oneDNN prefers, and the reorders from and to the caller's.
struct Compiled {
  convolution_forward conv;
  memory::desc scratchpad;        // the call's, from the block cache
  memory::desc src, weights, dst; // the convolution's
  memory::desc userSrc, userWeights, userDst;
  reorder toSrc, toWeights, fromDst; // unset where the layouts agree
  /// For prepared weights (PreparedParams.h): the convolution runs once per
  /// group on the group's channels (oneDNN's Winograd kernels take no
  /// groups), the user descriptors being one group's; else 1.
  int64_t runs = 1;
  /// Images a run takes at a time (all of them but for Winograd's large
  /// scratchpads): each run covers the batch in slices of this many.
  int64_t images = 0;
  bool winograd = false;
  /// The key of the prepared weights: the layout they are reordered to.
  std::vector<int64_t> preparedKey;
};

engine &cpuEngine() {
  static engine *e = new engine(engine::kind::cpu, 0);
  return *e;
}

/// How many shapes keep their primitives: GROVE_CONV_CACHE_SHAPES, default
/// 256. Shapes include the batch size and the team size, so a model called
/// at many batch sizes, or on one thread under contention (Threads.h),
/// builds a set for each (a few MB each: JIT code, descriptors);
/// beyond the bound the least recently used shape is dropped and rebuilt
/// when it comes back. Read when a shape is added (rare), so it can change.
size_t cacheCapacity() {
  std::optional<unsigned long long> n =
      unsignedFromEnv("GROVE_CONV_CACHE_SHAPES");
  return n && *n > 0 ? static_cast<size_t>(*n) : 256;
}

/// The primitives of every shape seen, most recently used first. Callers
/// hold a shared_ptr, so an entry dropped while another thread runs it
/// lives until that call ends.
template <typename T> class PrimitiveCache {
public:
  using Key = std::vector<int64_t>;

  /// The entry of `key`, made by `make` (which may throw: then nothing is
  /// kept) on first use.
  template <typename Make>
  std::shared_ptr<const T> get(Key key, const Make &make) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = entries.find(key); it != entries.end()) {
      recent.splice(recent.begin(), recent, it->second.second);
      return it->second.first;
    }
    auto shared = std::make_shared<const T>(make());
    recent.push_front(key);
    entries.emplace(std::move(key), std::make_pair(shared, recent.begin()));
    for (size_t capacity = cacheCapacity(); entries.size() > capacity;) {
      entries.erase(recent.back());
      recent.pop_back();
    }
    return shared;
  }

private:
  std::mutex mutex;
  std::list<Key> recent;
  std::map<Key, std::pair<std::shared_ptr<const T>, std::list<Key>::iterator>>
      entries;
};

/// The part of a cache key every convolution primitive shares: geometry,
/// team size and the views' sizes and strides.
std::vector<int64_t> shapeKey(const Problem &p, int64_t padB, int64_t padR) {
  // oneDNN fixes a primitive's thread count when it is created: a call the
  // runtime runs on fewer threads (Threads.h) needs primitives of its own.
  std::vector<int64_t> key = {
      p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, padB, padR, omp_get_max_threads()};
  for (const View5 *v : {&p.x, &p.w, &p.y})
    for (int i = 0; i < 5; ++i)
      key.insert(key.end(), {v->size[i], v->stride[i]});
  return key;
}

/// The most groups a convolution runs as Winograd, a group at a time.
constexpr int64_t kMaxWinogradGroups = 4;
/// The scratchpad a Winograd run may use, GROVE_WINOGRAD_SCRATCH_MB
/// (default 16, read once); larger batches run in slices.
size_t winogradScratchBytes() {
  static const size_t bytes = [] {
    std::optional<unsigned long long> mb =
        unsignedFromEnv("GROVE_WINOGRAD_SCRATCH_MB");
    return size_t(mb && *mb > 0 ? std::min<unsigned long long>(*mb, 1 << 20)
                                : 16)
           << 20;
  }();
  return bytes;
}

/// The largest divisor of `batch` whose share of `scratchBytes` (the
/// whole batch's) fits winogradScratchBytes(); at least 1.
int64_t sliceOf(int64_t batch, size_t scratchBytes) {
  size_t perImage = scratchBytes / size_t(batch) + 1;
  int64_t most =
      std::max<int64_t>(1, int64_t(winogradScratchBytes() / perImage));
  for (int64_t n = std::min(most, batch); n > 1; --n)
    if (batch % n == 0)
      return n;
  return 1;
}

/// The least output height and width a convolution runs as Winograd.
constexpr int64_t kMinWinogradSide = 14;

/// oneDNN's Winograd convolution for `p` (3x3, unstrided, undilated), a
/// group at a time: into `c` (its user descriptors one group's) and `pd`.
/// False where oneDNN has no Winograd kernel for it. Its weights transform
/// costs more than the convolution, so it runs only with prepared weights.
bool buildWinograd(const Problem &p, const memory::desc &userSrc,
                   const memory::desc &userDst, int64_t padB, int64_t padR,
                   int64_t images, Compiled &c,
                   convolution_forward::primitive_desc &pd) {
  const View5 &w = p.w;
  if (w.size[3] != 3 || w.size[4] != 3 || p.sh != 1 || p.sw != 1 || p.dh != 1 ||
      p.dw != 1)
    return false;
  // Its kernels work on blocks of 16 channels, a group at a time: few
  // groups of whole blocks, or the padding and the serial runs cost more
  // than the blocked direct kernels, which take groups (depthwise too).
  if (w.size[0] > kMaxWinogradGroups || w.size[1] % 16 || w.size[2] % 16)
    return false;
  // Its output tiles (4x4 or 2x2) waste much of a 7x7 image, and its
  // weights are 36/9 or 16/9 of them: there the blocked kernels' copy,
  // as large as the weights, keeps the peak memory down.
  if (p.y.size[3] < kMinWinogradSide || p.y.size[4] < kMinWinogradSide)
    return false;
  // One group's channels of the images: the same strides, fewer channels.
  auto group = [&](const memory::desc &d, int64_t channels) {
    memory::dims dims = d.dims();
    dims[0] = images;
    dims[1] = channels;
    const dnnl_blocking_desc_t &b = d.data.format_desc.blocking;
    return memory::desc(dims, memory::data_type::f32,
                        memory::dims(b.strides, b.strides + 4));
  };
  memory::desc src = group(userSrc, w.size[2]), dst = group(userDst, w.size[1]);
  memory::desc weights({w.size[1], w.size[2], 3, 3}, memory::data_type::f32,
                       {w.stride[1], w.stride[2], w.stride[3], w.stride[4]});
  auto any = [](const memory::desc &d) {
    return memory::desc(d.dims(), memory::data_type::f32,
                        memory::format_tag::any);
  };
  try {
    convolution_forward::desc desc(
        prop_kind::forward_inference, algorithm::convolution_winograd, any(src),
        any(weights), any(dst), {1, 1}, {0, 0}, {p.pt, p.pl}, {padB, padR});
    primitive_attr attr;
    attr.set_scratchpad_mode(scratchpad_mode::user);
    pd = convolution_forward::primitive_desc(desc, attr, cpuEngine());
  } catch (const dnnl::error &) {
    return false;
  }
  c.runs = w.size[0];
  c.images = images;
  c.winograd = true;
  c.userSrc = src;
  c.userWeights = weights;
  c.userDst = dst;
  return true;
}

/// Builds the primitives of `p` (compiled's work on a cache miss).
Compiled makeCompiled(const Problem &p, const memory::desc &userSrc,
                      const memory::desc &userDst, int64_t padB, int64_t padR,
                      bool prepared) {
  engine &eng = cpuEngine();
  memory::desc userWeights = weightsDesc(p.w);
  // From 2 images on, the layouts oneDNN prefers (blocked), paying for reorders
  // of the input, the result and the weights (which may change between calls,
  // so they are reordered on every call). For one image the weights' reorder
  // costs more than the faster kernels save (docs/perf.md, "Design
  // measurements"), so the caller's layouts throughout (oneDNN's GEMM-based
  // convolution, no reorder).
  auto build = [&](bool blocked) {
    auto pick = [&](const memory::desc &d) {
      return blocked ? memory::desc(d.dims(), memory::data_type::f32,
                                    memory::format_tag::any)
                     : d;
    };
    // oneDNN counts dilation from 0 (no gap).
    // The same convolution either way (a forward convolution keeps no
    // workspace), but oneDNN ranks its kernels by the propagation kind: for
    // inference its brgconv ones on channels-last layouts first, for
    // training its direct jit ones on channel blocks, whose reorders
    // (weights above all) cost less. Weights reordered on every call take
    // the latter; prepared ones, reordered once, the former (docs/perf.md).
    prop_kind kind = blocked && !prepared ? prop_kind::forward_training
                                          : prop_kind::forward_inference;
    convolution_forward::desc desc(
        kind, algorithm::convolution_direct, pick(userSrc), pick(userWeights),
        pick(userDst), {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.pt, p.pl},
        {padB, padR});
    // The scratchpad comes with each call, from the block cache: a
    // primitive owning its own kept 7-8 MB per cached shape.
    primitive_attr attr;
    attr.set_scratchpad_mode(scratchpad_mode::user);
    return convolution_forward::primitive_desc(desc, attr, eng);
  };
  Compiled c;
  convolution_forward::primitive_desc pd;
  if (!prepared ||
      !buildWinograd(p, userSrc, userDst, padB, padR, p.x.size[0], c, pd)) {
    // Weights prepared once are worth the blocked layouts at any batch.
    pd = build(prepared || p.x.size[0] > 1);
    // Layouts no optimised kernel takes leave oneDNN's reference one, which
    // is slower than reordering: then the blocked layouts after all.
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0)
      pd = build(true);
    c.userSrc = userSrc;
    c.userWeights = userWeights;
    c.userDst = userDst;
  } else if (pd.scratchpad_desc().get_size() > winogradScratchBytes()) {
    // Winograd's scratchpad holds the whole batch's transformed tiles
    // (hundreds of MB for a large image at batch 16): slices of the batch
    // bound it, for the price of running more often.
    int64_t images = sliceOf(p.x.size[0], pd.scratchpad_desc().get_size());
    if (images < p.x.size[0])
      buildWinograd(p, userSrc, userDst, padB, padR, images, c, pd);
  }
  c.conv = convolution_forward(pd);
  c.src = pd.src_desc();
  c.weights = pd.weights_desc();
  c.dst = pd.dst_desc();
  c.scratchpad = pd.scratchpad_desc();
  if (c.src != c.userSrc)
    c.toSrc = reorder(reorder::primitive_desc(eng, c.userSrc, eng, c.src));
  if (c.weights != c.userWeights)
    c.toWeights =
        reorder(reorder::primitive_desc(eng, c.userWeights, eng, c.weights));
  if (c.dst != c.userDst)
    c.fromDst = reorder(reorder::primitive_desc(eng, c.dst, eng, c.userDst));
  if (prepared) {
    // The layout's bytes name it: equal descriptors share one copy.
    const dnnl_memory_desc_t &md = c.weights.data;
    c.preparedKey.assign((sizeof(md) + 7) / 8 + 1, 0);
    std::memcpy(c.preparedKey.data(), &md, sizeof(md));
    c.preparedKey.back() = c.runs;
  }
  return c;
}

/// The cached primitives for `p`, built on first use.
std::shared_ptr<const Compiled> compiled(const Problem &p,
                                         const memory::desc &userSrc,
                                         const memory::desc &userDst,
                                         int64_t padB, int64_t padR,
                                         bool prepared) {
  std::vector<int64_t> key = shapeKey(p, padB, padR);
  key.push_back(prepared);
  // Never destroyed: a convolution may run from an application's static
  // destructors.
  static auto *cache = new PrimitiveCache<Compiled>;
  return cache->get(std::move(key), [&] {
    return makeCompiled(p, userSrc, userDst, padB, padR, prepared);
  });
}

/// `bytes` from the block cache, kept in `kept` for the rest of the call;
/// throws std::bad_alloc (the service reports it) when there are none.
void *takeScratch(std::vector<Scratch> &kept, size_t bytes) {
  Scratch b = allocateScratch(bytes);
  if (!b)
    throw std::bad_alloc();
  kept.push_back(std::move(b));
  return kept.back().get();
}

/// This thread's oneDNN stream, freed when the thread ends (thread-local
/// objects go before the static engine).
stream &threadStream() {
  thread_local std::unique_ptr<stream> st =
      std::make_unique<stream>(cpuEngine());
  return *st;
}

/// The weights' param, when they are one whole param the call only reads.
std::optional<StableParam> stableWeights(const View5 &w) {
  size_t count = 0;
  if (!isCompact(w.size, w.stride, 5) || !elementCount(w.size, 5, count))
    return std::nullopt;
  return findStableParam(w.base, count * sizeof(float));
}

/// The weights of `p` in `c`'s layout, a run's after another, into `copy`.
bool prepareWeights(const Problem &p, const Compiled &c, void *copy) {
  stream &st = threadStream();
  size_t bytes = c.weights.get_size();
  for (int64_t r = 0; r < c.runs; ++r) {
    memory user(c.userWeights, cpuEngine(), p.w.base + r * p.w.stride[0]);
    memory kept(c.weights, cpuEngine(),
                static_cast<uint8_t *>(copy) + r * bytes);
    if (c.toWeights)
      c.toWeights.execute(st, user, kept);
    else
      std::memcpy(kept.get_data_handle(), user.get_data_handle(), bytes);
  }
  st.wait();
  return true;
}

/// Runs `c` on `p`, once per run (group) where it runs per group; with the
/// prepared weights `kept`, or reordering the caller's.
void runConv(const Problem &p, const Compiled &c, const uint8_t *kept) {
  engine &eng = cpuEngine();
  stream &st = threadStream();
  // Blocked copies of the input, result and weights where the convolution
  // wants another layout, from the runtime's block cache for the call.
  std::vector<Scratch> scratch;
  auto fresh = [&](const memory::desc &d) {
    return takeScratch(scratch, d.get_size());
  };
  void *srcCopy = c.toSrc ? fresh(c.src) : nullptr;
  void *dstCopy = c.fromDst ? fresh(c.dst) : nullptr;
  void *weightsCopy = !kept && c.toWeights ? fresh(c.weights) : nullptr;
  void *pad = c.scratchpad.get_size() ? fresh(c.scratchpad) : nullptr;
  const int64_t batch = p.x.size[0], slice = c.images ? c.images : batch;
  for (int64_t r = 0; r < c.runs; ++r)
    for (int64_t n = 0; n < batch; n += slice) {
      memory userX(c.userSrc, eng,
                   p.x.base + r * p.x.stride[1] + n * p.x.stride[0]);
      memory userW(c.userWeights, eng, p.w.base + r * p.w.stride[0]);
      memory userY(c.userDst, eng,
                   p.y.base + r * p.y.stride[1] + n * p.y.stride[0]);
      memory src = srcCopy ? memory(c.src, eng, srcCopy) : userX;
      memory dst = dstCopy ? memory(c.dst, eng, dstCopy) : userY;
      memory weights = userW;
      if (kept)
        weights =
            memory(c.weights, eng,
                   const_cast<uint8_t *>(kept) + r * c.weights.get_size());
      else if (weightsCopy)
        weights = memory(c.weights, eng, weightsCopy);
      if (c.toSrc)
        c.toSrc.execute(st, userX, src);
      if (weightsCopy)
        c.toWeights.execute(st, userW, weights);
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src},
                                              {DNNL_ARG_WEIGHTS, weights},
                                              {DNNL_ARG_DST, dst}};
      if (pad)
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(c.scratchpad, eng, pad));
      c.conv.execute(st, args);
      if (c.fromDst)
        c.fromDst.execute(st, dst, userY);
    }
  st.wait();
}

/// oneDNN's view of `p`: the input with the trailing padding that makes
/// oneDNN's output size formula (rounding down) give the result's size, as
/// for a stride-2 convolution that skips the last row; else only the rows
/// and columns the output reads, unpadded at the end (a view that is not
/// dense, which some of oneDNN's kernels refuse). False where no view fits.
bool dnnlGeometry(const Problem &p, memory::desc &userSrc,
                  memory::desc &userDst, int64_t &padB, int64_t &padR) {
  auto extent = [](int64_t in, int64_t lead, int64_t trail, int64_t out,
                   int64_t k, int64_t s, int64_t d, int64_t &trailOut) {
    int64_t window = (k - 1) * d + 1;
    trailOut = trail;
    if ((in + lead + trail - window) / s + 1 == out)
      return in;
    trailOut = 0;
    return (out - 1) * s + window - lead;
  };
  int64_t rows = extent(p.x.size[3], p.pt, p.pb, p.y.size[3], p.w.size[3], p.sh,
                        p.dh, padB);
  int64_t cols = extent(p.x.size[4], p.pl, p.pr, p.y.size[4], p.w.size[4], p.sw,
                        p.dw, padR);
  // The output reads past the unpadded input but not into the bottom or
  // right padding as given: the loops handle it.
  if (rows > p.x.size[3] || cols > p.x.size[4] || rows < 1 || cols < 1)
    return false;
  return asNchw(p.x, rows, cols, userSrc) &&
         asNchw(p.y, p.y.size[3], p.y.size[4], userDst);
}

/// Runs `p` on oneDNN; false (nothing written) when its layouts do not fit.
bool convDnnl(const Problem &p, trace::Span &span) {
  int64_t padB = 0, padR = 0;
  memory::desc userSrc, userDst;
  if (!dnnlGeometry(p, userSrc, userDst, padB, padR))
    return false;
  // Weights that are a param this call only reads are reordered once and
  // kept (PreparedParams.h); the first call at a version does without.
  std::optional<StableParam> stable = stableWeights(p.w);
  std::shared_ptr<const Compiled> c;
  PreparedCopy kept;
  if (stable) {
    try {
      c = compiled(p, userSrc, userDst, padB, padR, /*prepared=*/true);
    } catch (const dnnl::error &) {
      // No primitive for the prepared layouts: the other path's.
    }
    if (c) {
      const Compiled &plan = *c;
      kept = stable->store->get(
          *stable, plan.preparedKey,
          size_t(plan.runs) * plan.weights.get_size(),
          [&](void *copy) { return prepareWeights(p, plan, copy); });
    }
  }
  if (!kept)
    c = compiled(p, userSrc, userDst, padB, padR, /*prepared=*/false);
  span.arg("prepared", kept ? 1 : 0);
  span.arg("winograd", c->winograd ? 1 : 0);
  span.arg("images", c->images ? c->images : p.x.size[0]);
  runConv(p, *c, kept ? kept->get() : nullptr);
  return true;
}

/// The weight gradient's primitives of one shape and layout: oneDNN's
/// backward-weights convolution in the layouts it prefers (channel
/// blocks), the reorders of x and dy into them and of dw out of them.
struct CompiledWeightGrad {
  convolution_backward_weights conv;
  memory::desc scratchpad, src, diffDst, diffWeights;
  memory::desc userSrc, userDiffDst, userDiffWeights;
  reorder toSrc, toDiffDst, fromDiffWeights; // unset where layouts agree
};

CompiledWeightGrad makeWeightGrad(const Problem &p, const memory::desc &userSrc,
                                  const memory::desc &userDst, int64_t padB,
                                  int64_t padR) {
  engine &eng = cpuEngine();
  memory::desc userWeights = weightsDesc(p.w);
  auto any = [](const memory::desc &d) {
    return memory::desc(d.dims(), memory::data_type::f32,
                        memory::format_tag::any);
  };
  memory::dims strides = {p.sh, p.sw}, dilations = {p.dh - 1, p.dw - 1},
               padL = {p.pt, p.pl}, padRight = {padB, padR};
  // oneDNN builds a backward primitive from the forward one it follows.
  convolution_forward::primitive_desc hint(
      convolution_forward::desc(prop_kind::forward_training,
                                algorithm::convolution_direct, any(userSrc),
                                any(userWeights), any(userDst), strides,
                                dilations, padL, padRight),
      eng);
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);
  convolution_backward_weights::primitive_desc pd(
      convolution_backward_weights::desc(
          algorithm::convolution_direct, any(userSrc), any(userWeights),
          any(userDst), strides, dilations, padL, padRight),
      attr, eng, hint);
  CompiledWeightGrad c;
  c.conv = convolution_backward_weights(pd);
  c.scratchpad = pd.scratchpad_desc();
  c.src = pd.src_desc();
  c.diffDst = pd.diff_dst_desc();
  c.diffWeights = pd.diff_weights_desc();
  c.userSrc = userSrc;
  c.userDiffDst = userDst;
  c.userDiffWeights = userWeights;
  if (c.src != userSrc)
    c.toSrc = reorder(reorder::primitive_desc(eng, userSrc, eng, c.src));
  if (c.diffDst != userDst)
    c.toDiffDst =
        reorder(reorder::primitive_desc(eng, userDst, eng, c.diffDst));
  if (c.diffWeights != userWeights)
    c.fromDiffWeights =
        reorder(reorder::primitive_desc(eng, c.diffWeights, eng, userWeights));
  return c;
}

/// Runs the weight gradient `p` on oneDNN; false (nothing written) when its
/// layouts do not fit.
bool weightGradDnnl(const Problem &p) {
  int64_t padB = 0, padR = 0;
  memory::desc userSrc, userDst;
  if (!dnnlGeometry(p, userSrc, userDst, padB, padR))
    return false;
  std::vector<int64_t> key = shapeKey(p, padB, padR);
  // Never destroyed: a weight gradient may run from an application's
  // static destructors.
  static auto *cache = new PrimitiveCache<CompiledWeightGrad>;
  std::shared_ptr<const CompiledWeightGrad> shared;
  try {
    shared = cache->get(std::move(key), [&] {
      return makeWeightGrad(p, userSrc, userDst, padB, padR);
    });
  } catch (const dnnl::error &) {
    return false; // no kernel for these layouts: the loops
  }
  const CompiledWeightGrad &c = *shared;
  engine &eng = cpuEngine();
  stream &st = threadStream();
  std::vector<Scratch> scratch;
  auto buffer = [&](const memory::desc &d, bool copy, void *user) {
    return memory(d, eng, copy ? takeScratch(scratch, d.get_size()) : user);
  };
  memory userX(c.userSrc, eng, p.x.base), userDy(c.userDiffDst, eng, p.y.base),
      userDw(c.userDiffWeights, eng, p.w.base);
  memory src = buffer(c.src, bool(c.toSrc), p.x.base);
  memory diffDst = buffer(c.diffDst, bool(c.toDiffDst), p.y.base);
  memory diffWeights = buffer(c.diffWeights, bool(c.fromDiffWeights), p.w.base);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src},
                                          {DNNL_ARG_DIFF_DST, diffDst},
                                          {DNNL_ARG_DIFF_WEIGHTS, diffWeights}};
  if (c.scratchpad.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, buffer(c.scratchpad, true, nullptr));
  if (c.toSrc)
    c.toSrc.execute(st, userX, src);
  if (c.toDiffDst)
    c.toDiffDst.execute(st, userDy, diffDst);
  c.conv.execute(st, args);
  if (c.fromDiffWeights)
    c.fromDiffWeights.execute(st, diffWeights, userDw);
  st.wait();
  return true;
}

#endif

View5 view(float *aligned, int64_t offset, const int64_t *sizes,
           const int64_t *strides) {
  View5 v{aligned ? aligned + offset : nullptr, {}, {}};
  for (int i = 0; i < 5; ++i)
    v.size[i] = sizes[i], v.stride[i] = strides[i];
  return v;
}

/// A call's problem: x, w (or dw) and y (or dy) as views, then the
/// geometry in the services' order.
Problem makeProblem(const grove_memref_f32_5 *x, const grove_memref_f32_5 *w,
                    const grove_memref_f32_5 *y, int64_t pt, int64_t pl,
                    int64_t pb, int64_t pr, int64_t sh, int64_t sw, int64_t dh,
                    int64_t dw) {
  return Problem{view(x->aligned, x->offset, x->sizes, x->strides),
                 view(w->aligned, w->offset, w->sizes, w->strides),
                 view(y->aligned, y->offset, y->sizes, y->strides),
                 sh,
                 sw,
                 dh,
                 dw,
                 pt,
                 pl,
                 pb,
                 pr};
}

/// Runs `body` as service `name`: C++ exceptions, which generated code
/// cannot handle, become a pending service error, as for the GEMMs.
template <typename Body> void asService(const char *name, const Body &body) {
  try {
    body();
  } catch (const std::bad_alloc &) {
    // A primitive, its scratchpad or a blocked copy.
    report(name, "out of memory", GROVE_ERROR_OUT_OF_MEMORY);
  } catch (const std::exception &e) {
    report(name, std::string("internal error: ") + e.what());
  } catch (...) {
    report(name, "unexpected internal exception");
  }
}

} // namespace

extern "C" {

GROVE_API void _mlir_ciface_grove_rt_conv2d_f32(
    const grove_memref_f32_5 *x, const grove_memref_f32_5 *w,
    grove_memref_f32_5 *y, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w) {
  grove::rt::trace::Span span("service", "grove_rt_conv2d_f32");
  Problem p = makeProblem(x, w, y, pad_top, pad_left, pad_bottom, pad_right,
                          stride_h, stride_w, dilation_h, dilation_w);
  asService("grove_rt_conv2d_f32", [&] {
    span.arg("n", x->sizes[0]);
    span.arg("c", x->sizes[1]);
    span.arg("h", x->sizes[2]);
    span.arg("w", x->sizes[3]);
    span.arg("k", w->sizes[0]);
    span.arg("f", w->sizes[1]);
    if (!check(p, "grove_rt_conv2d_f32"))
      return;
#if GROVE_HAVE_DNNL
    // Zero-sized problems (a result of zeros, or nothing to write) are the
    // loops' to do; oneDNN rejects them.
    if (!hasZeroSize(p) && convDnnl(p, span))
      return;
#endif
    convLoops(p);
  });
}

GROVE_API void _mlir_ciface_grove_rt_conv2d_weight_grad_f32(
    const grove_memref_f32_5 *x, const grove_memref_f32_5 *dy,
    grove_memref_f32_5 *dw, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w) {
  const char *name = "grove_rt_conv2d_weight_grad_f32";
  grove::rt::trace::Span span("service", name);
  // The forward convolution's problem, its weights' place taken by dw and
  // its result's by dy.
  Problem p = makeProblem(x, dw, dy, pad_top, pad_left, pad_bottom, pad_right,
                          stride_h, stride_w, dilation_h, dilation_w);
  asService(name, [&] {
    span.arg("n", x->sizes[0]);
    span.arg("g", x->sizes[1]);
    span.arg("c", x->sizes[2]);
    span.arg("f", dw->sizes[1]);
    span.arg("h", x->sizes[3]);
    span.arg("w", x->sizes[4]);
    span.arg("kh", dw->sizes[3]);
    span.arg("kw", dw->sizes[4]);
    if (!check(p, name, "weight gradient", "output gradient"))
      return;
#if GROVE_HAVE_DNNL
    // Zero-sized problems (a gradient of zeros, or nothing to write) are
    // the loops' to do; oneDNN rejects them.
    if (!hasZeroSize(p) && weightGradDnnl(p))
      return;
#endif
    weightGradLoops(p);
  });
}

} // extern "C"
