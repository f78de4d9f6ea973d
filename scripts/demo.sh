#!/usr/bin/env bash
# scripts/demo.sh - the main job on a fresh Debian 12 machine: install what
# Grove needs, build it, compile the shipped MLP with grovec, link it into the
# example app and classify scikit-learn's held-out digits. Where the CUDA
# target is built, the same app is also built for the GPU and run if a GPU is
# present (said so, and skipped, where none is).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh" grovec grove_rt digits train_digits train_trees \
  train_dist

echo
echo "demo: grovec models/mlp/mlp.mlir -> $BUILD/examples/digits/grove_mlp_model/"
ls -l "$BUILD/examples/digits/grove_mlp_model/"
echo
echo "demo: examples/digits (C app linked with libmlp.a and libgrove_rt):"
"$BUILD/examples/digits/digits" \
  "$BUILD/examples/digits/grove_mlp_model/mlp.safetensors" \
  "$ROOT/models/mlp/digits_test.bin" \
  --expect "$ROOT/models/mlp/reference_accuracy.txt"

echo
echo "demo: examples/train_digits (the MLP trained from scratch by its compiled"
echo "      train step: forward, backward and Adam in one call per batch):"
"$ROOT/.venv/bin/python" "$ROOT/examples/train_digits/make_data.py" \
  "$BUILD/examples/train_digits/digits_train.bin"
"$BUILD/examples/train_digits/train_digits" \
  "$BUILD/examples/train_digits/digits_train.bin" \
  "$ROOT/models/mlp/digits_test.bin" \
  --checkpoint "$BUILD/examples/train_digits/checkpoint.safetensors" \
  --expect-accuracy 0.97
echo
echo "demo: the same app with --model cnn (conv, batch norm with running"
echo "      statistics as state, ReLU, max-pool; Adam):"
"$BUILD/examples/train_digits/train_digits" \
  "$BUILD/examples/train_digits/digits_train.bin" \
  "$ROOT/models/mlp/digits_test.bin" --model cnn --expect-accuracy 0.98

echo
echo "demo: examples/train_trees (a child-sum Tree-LSTM trained from scratch on"
echo "      the syntax trees of Python's standard library, one compiled train"
echo "      step per batch of trees, batched level by level; docs/trees.md):"
"$ROOT/.venv/bin/python" "$ROOT/examples/train_trees/make_data.py" \
  "$BUILD/examples/train_trees/trees.bin"
"$BUILD/examples/train_trees/train_trees" \
  "$BUILD/examples/train_trees/trees.bin" --epochs 8 --expect-accuracy 0.65

echo
echo "demo: examples/train_dist (the MLP trained data-parallel on 4 ranks under"
echo "      mpirun, top-k with error feedback sending 1/32 of the gradients'"
echo "      bytes; docs/distributed.md):"
MPIRUN=(mpirun --oversubscribe --enable-recovery -np 4 -x OMP_NUM_THREADS=1)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
"${MPIRUN[@]}" "$BUILD/examples/train_dist/train_dist" \
  "$BUILD/examples/train_digits/digits_train.bin" \
  "$ROOT/models/mlp/digits_test.bin" --method topk-ef --epochs 100 \
  --expect-accuracy 0.96

# train_bert exists where CMake found the venv's python to run generate.py.
echo
if ninja -C "$BUILD" -t query train_bert >/dev/null 2>&1; then
  "$ROOT/scripts/build.sh" train_bert >/dev/null
  echo "demo: examples/train_bert (BERT-tiny's masked LM pre-trained from C on the"
  echo "      corpus setup.sh built: rows packed and masked in C, one compiled"
  echo "      LANS step per batch of 32; 60 steps of its 1000; docs/bert.md):"
  "$BUILD/examples/train_bert/train_bert" "$ROOT/build/data/bert" \
    --steps 60 --interval 20 \
    --checkpoint "$BUILD/examples/train_bert/checkpoint.safetensors" \
    --expect-loss-below 8
else
  echo "demo: examples/train_bert not configured (no $ROOT/.venv/bin/python when"
  echo "      CMake ran; rerun cmake on $BUILD): SKIPPED"
fi

# digits_cuda exists where CMake found a CUDA toolkit.
if ninja -C "$BUILD" -t query digits_cuda >/dev/null 2>&1; then
  "$ROOT/scripts/build.sh" digits_cuda >/dev/null
  echo
  echo "demo: grovec --target=cuda models/mlp/mlp.mlir (kernels embedded in the library):"
  "$ROOT/.venv/bin/python" "$ROOT/tools/grove-fatbin/grove-fatbin.py" \
    "$BUILD/examples/digits/grove_mlp_model_cuda/libmlp.a"
  echo "demo: examples/digits_cuda (linked with libgrove_rt_cuda, cuBLAS, cudart):"
  if "$BUILD/examples/digits/digits_cuda" \
      "$BUILD/examples/digits/grove_mlp_model/mlp.safetensors" \
      "$ROOT/models/mlp/digits_test.bin" \
      --expect "$ROOT/models/mlp/reference_accuracy.txt" 2>/tmp/grove-demo-cuda.err; then
    :
  elif grep -q GROVE_ERROR_NO_DEVICE /tmp/grove-demo-cuda.err; then
    echo "demo: GPU run SKIPPED - no usable GPU here: $(cat /tmp/grove-demo-cuda.err)"
  else
    cat /tmp/grove-demo-cuda.err >&2
    exit 1
  fi
else
  echo
  echo "demo: CUDA target not built here (no CUDA toolkit): GPU demo SKIPPED"
fi
