#!/usr/bin/env bash
# scripts/gpu-check.sh - the GPU check, in two halves (docs/cuda.md).
#
#   scripts/gpu-check.sh prepare   here (any machine with the CUDA toolkit):
#       builds Grove, compiles every integration-test model, the shipped
#       models, ResNeSt-50 (224x224, f32 and bf16) and the benchmark kernels
#       with grovec --target=cuda, records the host backend's results on the
#       random inputs vs_host.py compares and on the ResNeSt-50 benchmark's
#       seeded weights, and assembles gpu-bundle/ (~65 MB, carried packed as
#       payload.tar.xz, ~5 MB; run unpacks it): a runtime with no
#       dependency but cuBLAS, the model libraries, the runtime's gtests,
#       digits_cuda.
#   scripts/gpu-check.sh run [OUTDIR]   on the GPU machine (nvcc, PyTorch and
#       cuBLAS there, no LLVM 22 and no network, so nothing is compiled by
#       grovec there): runs the CUDA gtests (GPU cases must not skip), the
#       example app, every integration test on the GPU (numpy/PyTorch
#       references) and vs_host.py (GPU vs host), then bench/gpu/run.py.
#       Writes OUTDIR/gpu-results.md and OUTDIR/gpu-check.log; exits 1 on any
#       failure; OUTDIR/profile.txt has ResNeSt-50's per-kernel GPU times.
#       Budget: about 3 minutes on an H200 (of which ResNeSt-50's
#       torch.compile, last, took 90 s and may take up to 180 s: run.py
#       --resnest-compile-budget), plus the cuDNN and 32-bit-index variants
#       (not yet run: allow 7 minutes).
#
# With the device tool: prepare here, then
#   run(command="scripts/gpu-check.sh run $OUT", carry=["gpu-bundle"],
#       timeout_s=420)
# and copy $OUT/gpu-results.md into docs/gpu-results.md.
set -Eeuo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUNDLE="${GROVE_GPU_BUNDLE:-$ROOT/gpu-bundle}"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
INTEGRATION=(elementwise contraction reduction data_movement mlp nn split_attention resnest low_precision optimizers batch_norm_training schedules resnest_train labels checkpoint trees transformer dropout mixed_precision bert_mixed_precision)
# The bundle must fit the device tool's 64 MiB carry: optimizers.py runs
# one model per optimizer family there (the host runs all of them).
export GROVE_TEST_MODELS="sgd_nesterov_f64,adamw_f64,adam_clip_skip_f32,adagrad_f32,lamb_f32,lans_clip_skip_f32,adaalter_local_skip_f32,sgd_cosine_f32"

log() { echo "gpu-check: $*"; }
# The tracked paths a bundle depends on (everything but docs/).
SOURCES=(CMakeLists.txt cmake include lib runtime tools models bench test unittests
         examples scripts requirements.txt)

prepare() {
  [[ -x "$CUDA/bin/ptxas" ]] || { log "no CUDA toolkit at $CUDA"; exit 1; }
  "$ROOT/scripts/setup.sh"
  "$ROOT/scripts/build.sh" grovec grove_rt grove_rt_cuda
  rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"/{rt,models,bin,data}

  # The runtime for the GPU machine: OpenBLAS linked statically (for host
  # models) and no oneDNN, so that only cuBLAS/cudart come from there.
  log "runtime without host library dependencies"
  local rtb="$BUILD/gpu-bundle-runtime"
  # Without MPI: the GPU machine may have no Open MPI, and a runtime that
  # needs libmpi would not load there at all.
  cmake -S "$ROOT/runtime" -B "$rtb" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGROVE_USE_DNNL=OFF -DBLA_STATIC=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenBLAS=ON \
    -DGROVE_USE_MPI=OFF -DCUDAToolkit_ROOT="$CUDA" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--gc-sections -Wl,--exclude-libs,ALL" >/dev/null
  ninja -C "$rtb" grove_rt_cuda_shared grove_rt_cuda >/dev/null
  cp -P "$rtb"/libgrove_rt_cuda.so* "$BUNDLE/rt/"
  # The same with Open MPI (Debian's libmpi.so.40), for the multi-process
  # test (distributed_gpu.py puts it first on the library path; it reports
  # SKIP where the GPU machine has no Open MPI).
  log "runtime with Open MPI (rt-mpi/)"
  cmake -S "$ROOT/runtime" -B "$rtb-mpi" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGROVE_USE_DNNL=OFF -DBLA_STATIC=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenBLAS=ON \
    -DGROVE_USE_MPI=ON -DCUDAToolkit_ROOT="$CUDA" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--gc-sections -Wl,--exclude-libs,ALL" >/dev/null
  ninja -C "$rtb-mpi" grove_rt_cuda_shared >/dev/null
  mkdir -p "$BUNDLE/rt-mpi"
  cp -P "$rtb-mpi"/libgrove_rt_cuda.so* "$BUNDLE/rt-mpi/"

  local env=(env GROVE_BIN="$BUILD/bin" GROVE_LIB="$BUILD/lib"
             PYTHONPATH="$ROOT/test/lib" CUDA_HOME="$CUDA"
             GROVE_TEST_BUNDLE="$BUNDLE" GROVE_TEST_COMPILE_ONLY=1
             GROVE_TEST_TARGET=cuda OMP_NUM_THREADS=1)
  for t in "${INTEGRATION[@]}"; do
    log "model of test/Integration/$t.py"
    "${env[@]}" "$ROOT/.venv/bin/python" "$ROOT/test/Integration/$t.py" >/dev/null
  done
  log "distributed_gpu.py: data-parallel models and the host's results"
  "${env[@]}" "$ROOT/.venv/bin/python" "$ROOT/test/Integration/CUDA/distributed_gpu.py" \
    prepare "$BUNDLE" >/dev/null
  log "vs_host.py: host results recorded"
  "${env[@]}" "$ROOT/.venv/bin/python" "$ROOT/test/Integration/CUDA/vs_host.py" >/dev/null

  # Shipped models and benchmark kernels, by name; ResNeSt-50 for
  # bench/gpu/run.py at 224x224 in f32 (the shipped frontend form) and bf16
  # (generate.py --dtype bf16), one library each: the batch is dynamic.
  # The split-attention benchmark's functions (every ResNeSt-50 block shape),
  # fused and, with the fusion off, as the frontend's primitive ops.
  local tmp; tmp="$(mktemp -d)"
  "$ROOT/.venv/bin/python" "$ROOT/models/resnest/generate.py" --dtype bf16 \
    >"$tmp/resnest50_bf16.mlir"
  "$ROOT/.venv/bin/python" "$ROOT/bench/split_attention.py" \
    --emit-mlir "$tmp/split_attention.mlir"
  # The Tree-LSTM of bench/gpu/treelstm_gpu.py (bench/treelstm.py's sizes)
  # and its corpus, made here: the GPU machine's Python may differ.
  "$ROOT/.venv/bin/python" -c "import sys; sys.path.insert(0, '$ROOT/bench')
import treelstm as T
open('$tmp/treelstm_bench.mlir', 'w').write(T.generate.module(
    'child-sum', T.V, T.D, T.H, T.C, 'f32', lr=1e-3, name='treelstm_bench'))"
  "$ROOT/.venv/bin/python" "$ROOT/examples/train_trees/make_data.py" \
    "$BUNDLE/data/trees.bin" >/dev/null
  for m in "$ROOT/models/mlp/mlp.mlir:mlp" "$ROOT/bench/gpu/kernels.mlir:gpukernels" \
      "$ROOT/models/resnest/resnest50.unfused.mlir:resnest50" \
      "$tmp/resnest50_bf16.mlir:resnest50_bf16" \
      "$ROOT/models/resnest/resnest50.unfused.mlir:resnest50_cudnn:--conv-library" \
      "$tmp/resnest50_bf16.mlir:resnest50_bf16_cudnn:--conv-library" \
      "$ROOT/models/resnest/resnest50.unfused.mlir:resnest50_cudnn_narrow:--conv-library --cuda-narrow-indices" \
      "$tmp/resnest50_bf16.mlir:resnest50_bf16_cudnn_narrow:--conv-library --cuda-narrow-indices" \
      "$tmp/split_attention.mlir:sa_fused_narrow:--cuda-narrow-indices" \
      "$tmp/split_attention.mlir:sa_fused" \
      "$tmp/split_attention.mlir:sa_plain:--fuse-split-attention=false" \
      "$tmp/treelstm_bench.mlir:treelstm_bench"; do
    local src="${m%%:*}" rest="${m#*:}"
    local name="${rest%%:*}" flags=()
    [[ "$rest" == *:* ]] && read -ra flags <<<"${rest#*:}"
    log "$name for CUDA ${flags[*]}"
    "$BUILD/bin/grovec" "$src" -o "$tmp/$name" --target=cuda --name="$name" \
      "${flags[@]}"
    cc -shared -o "$BUNDLE/models/lib$name.so" -Wl,--whole-archive \
      "$tmp/$name/lib$name.a" -Wl,--no-whole-archive -L"$BUNDLE/rt" \
      '-Wl,-rpath,$ORIGIN/../rt' -lgrove_rt_cuda -lm
  done
  # The BERT corpus for bert_mixed_precision.py (about 1 MB).
  mkdir -p "$BUNDLE/data/bert"
  cp "$ROOT"/build/data/bert/{meta.json,vocab.txt,train.bin,valid.bin} "$BUNDLE/data/bert/"
  cp "$ROOT/models/mlp/mlp.safetensors" "$ROOT/models/mlp/digits_test.bin" \
    "$ROOT/models/mlp/reference_accuracy.txt" "$BUNDLE/data/"
  # The weights are not shipped (110 MB): run.py generates them from the
  # seed; the host's f32 logits on them, for its GPU-vs-host check.
  log "ResNeSt-50: host logits on the GPU benchmark's seeded weights"
  "${env[@]}" "$ROOT/.venv/bin/python" "$ROOT/bench/gpu/resnest50.py" \
    record-host "$BUNDLE/data/resnest50_host.npz"
  # The toolkit's stub driver, for the runtime test that must reject it.
  cp "$CUDA/lib64/stubs/libcuda.so" "$BUNDLE/data/libcuda-stub.so"

  # The example app and the runtime's CUDA gtests, cudart linked statically.
  local rt=(-L"$BUNDLE/rt" '-Wl,-rpath,$ORIGIN/../rt' -lgrove_rt_cuda
            -L"$CUDA/lib64" -lcudart_static -ldl -lrt -lpthread)
  cc -O2 -DDIGITS_CUDA=1 -I"$tmp/mlp" -I"$ROOT/runtime/include" -I"$CUDA/include" \
    "$ROOT/examples/digits/digits.c" "$tmp/mlp/libmlp.a" "${rt[@]}" -lm \
    -o "$BUNDLE/bin/digits_cuda"
  c++ -O2 -std=c++17 -DGROVE_TEST_CUDA_TOOLKIT="\"$CUDA\"" \
    -I"$ROOT/runtime/include" -I"$ROOT/runtime/src/cuda" -I"$CUDA/include" \
    "$ROOT/unittests/runtime/CudaRuntimeTest.cpp" \
    "$ROOT/unittests/runtime/CudaConvTest.cpp" \
    "$ROOT/unittests/runtime/CachingAllocatorTest.cpp" \
    "$ROOT/unittests/runtime/TestUtil.cpp" \
    "$ROOT/runtime/src/cuda/CachingAllocator.cpp" \
    -lgtest_main -lgtest "${rt[@]}" -o "$BUNDLE/bin/grove-runtime-cuda-tests"
  rm -rf "$tmp"
  # What the bundle was built from: run refuses a bundle older than the
  # tree it runs in (stale libraries would pass for the new code).
  (cd "$ROOT" && git ls-files -z -- "${SOURCES[@]}" | xargs -0 sha256sum) \
    >"$BUNDLE/SOURCES.sha256"
  { echo "prepared $(date -u +%FT%TZ) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    (cd "$BUNDLE" && find . -type f | sort); } >"$BUNDLE/MANIFEST"
  # Packed (xz): libraries with embedded cubins and PTX shrink about 10x,
  # and the device tool carries at most 64 MiB with the working tree.
  tar -C "$BUNDLE" -cJf "$BUNDLE/payload.tar.xz" models rt rt-mpi bin data
  rm -rf "${BUNDLE:?}"/{models,rt,rt-mpi,bin,data}
  log "bundle ready: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1), packed)"
  local bytes; bytes="$(du -sb "$BUNDLE" | cut -f1)"
  if ((bytes > 60 * 1024 * 1024)); then
    log "bundle is $((bytes >> 20)) MiB, over the 60 MiB that leaves room for" \
      "the tree in the device tool's 64 MiB carry: trim GROVE_TEST_MODELS"
    exit 1
  fi
}

run() {
  local out="${1:-$ROOT}"
  mkdir -p "$out"
  [[ -f "$BUNDLE/MANIFEST" ]] || { log "no $BUNDLE: run 'scripts/gpu-check.sh prepare' first"; exit 1; }
  exec > >(tee "$out/gpu-check.log") 2>&1
  if [[ -f "$BUNDLE/payload.tar.xz" && ! -d "$BUNDLE/models" ]]; then
    log "unpacking the bundle"
    tar -C "$BUNDLE" -xJf "$BUNDLE/payload.tar.xz"
  fi
  local stale
  stale="$(cd "$ROOT" && sha256sum --quiet -c "$BUNDLE/SOURCES.sha256" 2>&1 | head -5 || true)"
  if [[ ! -f "$BUNDLE/SOURCES.sha256" || -n "$stale" ]]; then
    log "STALE BUNDLE: sources changed since 'prepare' (${stale:-no SOURCES.sha256}); rerun prepare"
    [[ "${GROVE_GPU_ALLOW_STALE:-0}" == 1 ]] || exit 1
  fi
  local t0=$SECONDS fails=0 passes=0 skips=0
  local py; py="$(command -v python3)"
  # cuBLAS, cudart 13, cuDNN 9 and NCCL: the toolkit's, else the NVIDIA
  # wheels PyTorch depends on (nvidia/cu13/lib or nvidia/<lib>/lib in
  # site-packages; cuDNN is nvidia/cudnn/lib, NCCL nvidia/nccl/lib).
  local wheel_libs
  wheel_libs="$("$py" - <<'PY' 2>/dev/null || true
import glob, os, site
dirs = set()
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for d in glob.glob(os.path.join(sp, "nvidia", "*", "lib")):
        if any(glob.glob(os.path.join(d, lib + ".so*"))
               for lib in ("libcublas", "libcudart", "libcudnn", "libnccl")):
            dirs.add(d)
print(":".join(sorted(dirs)))
PY
)"
  # No empty entries: the loader reads one as the current directory.
  export LD_LIBRARY_PATH="$CUDA/lib64${wheel_libs:+:$wheel_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CUDA_HOME="$CUDA" PYTHONPATH="$ROOT/test/lib" GROVE_TEST_BUNDLE="$BUNDLE" \
    GROVE_TEST_TARGET=cuda PYTHONUNBUFFERED=1 GROVE_BERT_DATA="$BUNDLE/data/bert" \
    GROVE_TEST_CUDA_STUB="$BUNDLE/data/libcuda-stub.so" GROVE_CUDNN_LOG=1
  log "libraries from: $CUDA/lib64 ${wheel_libs:-(no NVIDIA wheels)}"
  "$py" -c 'import numpy, torch, ml_dtypes, safetensors' ||
    log "WARNING: a Python package the tests import is missing (above)"
  log "$(cat "$BUNDLE/MANIFEST" | head -1)"
  nvidia-smi -L || true

  step() { # name, command... (exit 77: skipped, with the reason printed)
    local name="$1" rc=0; shift
    log "-- $name"
    "$@" || rc=$?
    if ((rc == 0)); then passes=$((passes + 1)); log "PASS $name"
    elif ((rc == 77)); then skips=$((skips + 1)); log "SKIP $name"
    else fails=$((fails + 1)); log "FAIL $name"; fi
  }
  gtests() {
    "$BUNDLE/bin/grove-runtime-cuda-tests" --gtest_brief=1 >"$out/gtest.txt" 2>&1
    local rc=$?; cat "$out/gtest.txt"
    # On a GPU machine nothing may skip.
    [[ $rc -eq 0 ]] && ! grep -q "SKIPPED" "$out/gtest.txt"
  }
  step "runtime gtests (CUDA)" gtests
  step "digits_cuda = PyTorch accuracy" "$BUNDLE/bin/digits_cuda" \
    "$BUNDLE/data/mlp.safetensors" "$BUNDLE/data/digits_test.bin" \
    --expect "$BUNDLE/data/reference_accuracy.txt"
  for t in "${INTEGRATION[@]}"; do
    step "test/Integration/$t.py on the GPU" "$py" "$ROOT/test/Integration/$t.py"
  done
  gpu_trace() { # GROVE_TRACE on the GPU: kernels, copies and cuBLAS timed
    local trace="$out/digits-cuda-trace.json"
    GROVE_TRACE="$trace" "$BUNDLE/bin/digits_cuda" "$BUNDLE/data/mlp.safetensors" \
      "$BUNDLE/data/digits_test.bin" >/dev/null &&
      "$py" "$ROOT/scripts/check_trace.py" "$trace" --require entry \
        --require gpu.kernel --require gpu.library
  }
  step "GPU trace spans (GROVE_TRACE, check_trace.py)" gpu_trace
  step "GPU vs host (vs_host.py)" "$py" "$ROOT/test/Integration/CUDA/vs_host.py"
  step "data-parallel on the GPU: staged and NCCL (distributed_gpu.py)" \
    "$py" "$ROOT/test/Integration/CUDA/distributed_gpu.py" run "$BUNDLE"
  for t in elementwise mlp; do
    step "test/Integration/$t.py, asynchronous context" \
      env GROVE_TEST_ASYNC=1 "$py" "$ROOT/test/Integration/$t.py"
  done
  log "tests: $passes passed, $fails failed, $skips skipped ($((SECONDS - t0)) s)"

  step "benchmarks" "$py" "$ROOT/bench/gpu/run.py" --bundle "$BUNDLE" \
    --out "$out/gpu-results.md" --profile "$out/profile.txt"
  { echo; echo "Checks: $passes passed, $fails failed, $skips skipped (scripts/gpu-check.sh run, $((SECONDS - t0)) s)."; } \
    >>"$out/gpu-results.md" 2>/dev/null || true
  log "done in $((SECONDS - t0)) s: $passes passed, $fails failed, $skips skipped"
  [[ $fails -eq 0 ]]
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 prepare | run [OUTDIR]" >&2; exit 2 ;;
esac
