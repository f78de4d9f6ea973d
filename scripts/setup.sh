#!/usr/bin/env bash
# scripts/setup.sh — idempotent set-up of a Debian 12 machine for Grove.
#
#   sudo scripts/setup.sh              # system packages + .venv with the test packages
#   GROVE_BENCH=1 scripts/setup.sh     # ... plus the benchmark peers (IREE, JAX, DyNet), ~0.5 GB
#
# 1. Debian packages: each one is checked with dpkg-query; `apt-get update` and
#    `apt-get install --no-install-recommends` run only when something is missing
#    (waiting up to 15 min for another apt/dpkg to release its lock).
# 2. .venv at the repository root: a venv of Debian's /usr/bin/python3 with
#    --system-site-packages, so Debian's python3-torch 1.13 / numpy 1.24 /
#    sklearn 1.2 are visible. Recreated only if missing or made differently.
# 3. pip installs requirements.txt (and requirements-bench.txt with GROVE_BENCH=1)
#    with numpy constrained to Debian's exact version: pip can never pull
#    numpy 2.x over it (torch 1.13 is built against numpy 1.x). Skipped when the
#    requirement files are unchanged since the last successful run.
# 4. A smoke test runs the venv (numpy <-> torch round trip, imports); it fails
#    loudly if the environment is broken.
# 5. With GROVE_BENCH=1, a second venv for the JAX peer (.venv-jax, ~0.6 GB): the newest
#    JAX wants numpy 2, which .venv cannot take, so this one is made from
#    /usr/bin/python3 WITHOUT the system site packages and gets
#    requirements-jax.txt (jax, jaxlib, optax, numpy 2, pinned); recreated only
#    if missing or made differently, pip skipped while the file is unchanged,
#    then its own smoke test (a jitted step on the CPU). bench/train_step.py
#    runs its JAX workers there. .venv keeps jax 0.4.30 (requirements-bench.txt)
#    for what imports JAX beside torch (bench/attention.py, test/python).
# 6. models/bert/make_corpus.py builds the BERT masked-LM corpus in
#    build/data/bert (docs/bert.md) from the standard library's docstrings, in
#    a few seconds; it returns at once when the corpus is up to date.
#
# Environment: GROVE_BENCH=1 (benchmark peers), GROVE_VENV (venv path, default
# <repo>/.venv), GROVE_JAX_VENV (the JAX venv's path, default <repo>/.venv-jax),
# GROVE_SETUP_FORCE_PIP=1 (run pip even if the stamps match).
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${GROVE_VENV:-$ROOT/.venv}"
JAX_VENV="${GROVE_JAX_VENV:-$ROOT/.venv-jax}"
BENCH="${GROVE_BENCH:-0}"
SYS_PY=/usr/bin/python3
START_NS=$(date +%s%N)
LOG="$(mktemp "${TMPDIR:-/tmp}/grove-setup.XXXXXX.log")"

log() { printf 'setup: %s\n' "$*"; }
die() {
  printf 'setup: ERROR: %s\n' "$*" >&2
  if [[ -s "$LOG" ]]; then
    printf 'setup: last lines of %s:\n' "$LOG" >&2
    tail -n 25 "$LOG" >&2
  fi
  exit 1
}
trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

# Compiler toolchain (LLVM/MLIR 22), build tools, runtime deps, test references.
# g++ is not in a minimal Debian image and every build needs it.
# libgfortran-12-dev: a static link of the runtime (pkg-config --static grove)
# takes OpenBLAS's private -lgfortran, whose link-time library only the -dev
# package ships (libopenblas0 brings the run-time one alone).
PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
  ninja-build cmake g++ pkgconf clang-format
  libopenblas-dev libgfortran-12-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libdlpack-dev nlohmann-json3-dev libgtest-dev
  openmpi-bin libopenmpi-dev iproute2
  python3-torch python3-numpy python3-sklearn python3-venv python3-dev
)

if [[ -r /etc/os-release ]]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  [[ "${ID:-}" == debian && "${VERSION_ID:-}" == 12 ]] ||
    log "warning: this script targets Debian 12; found ${PRETTY_NAME:-unknown}"
fi

# ---------------------------------------------------------------- 1. apt
is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}
missing=()
present=()
for p in "${PACKAGES[@]}"; do
  if is_installed "$p"; then present+=("$p"); else missing+=("$p"); fi
done
if ((${#missing[@]} == 0)); then
  log "apt: skipped, all ${#present[@]} packages already installed"
else
  log "apt: already installed (skipped): ${present[*]:-none}"
  log "apt: installing: ${missing[*]}"
  [[ $(id -u) -eq 0 ]] || die "installing Debian packages needs root (run with sudo)"
  export DEBIAN_FRONTEND=noninteractive
  APT=(apt-get -q -y -o DPkg::Lock::Timeout=900)
  t0=$(date +%s)
  "${APT[@]}" update >>"$LOG" 2>&1 || die "apt-get update failed"
  "${APT[@]}" install --no-install-recommends "${missing[@]}" >>"$LOG" 2>&1 ||
    die "apt-get install failed"
  for p in "${missing[@]}"; do is_installed "$p" || die "package $p is still not installed"; done
  log "apt: installed ${#missing[@]} package(s) in $(($(date +%s) - t0)) s"
fi

# ---------------------------------------------------------------- 2. venv
[[ -x "$SYS_PY" ]] || die "$SYS_PY not found (python3-venv should have brought it)"
# Whether venv $1 was made from Debian's python3, with system site packages
# when $2 is true, without them when false.
venv_from_debian() {
  [[ -x "$1/bin/python" && -f "$1/pyvenv.cfg" ]] || return 1
  grep -Eq "^include-system-site-packages *= *$2" "$1/pyvenv.cfg" || return 1
  grep -Eq '^home *= */usr/bin$' "$1/pyvenv.cfg" || return 1
  "$1/bin/python" -c 'import sys; sys.exit(0 if sys.base_prefix == "/usr" else 1)' 2>/dev/null
}
if venv_from_debian "$VENV" true; then
  log "venv: skipped, $VENV already exists (Debian python3, system site packages)"
else
  if [[ -e "$VENV" ]]; then
    log "venv: $VENV exists but was not made from $SYS_PY --system-site-packages; recreating"
    rm -rf "$VENV"
  fi
  "$SYS_PY" -m venv --system-site-packages "$VENV" >>"$LOG" 2>&1 || die "creating the venv failed"
  log "venv: created $VENV"
fi
PY="$VENV/bin/python"

# ---------------------------------------------------------------- 3. pip
DEB_NUMPY="$("$SYS_PY" -c 'import numpy; print(numpy.__version__)')" ||
  die "Debian's numpy does not import with $SYS_PY"
CONSTRAINTS="$VENV/grove-constraints.txt"
printf '# written by scripts/setup.sh: keep Debian numpy (torch 1.13 needs numpy 1.x)\nnumpy==%s\n' \
  "$DEB_NUMPY" >"$CONSTRAINTS"

REQS=("$ROOT/requirements.txt")
STAMP="$VENV/.grove-pip-stamp-base"
if [[ "$BENCH" == 1 ]]; then
  REQS=("$ROOT/requirements-bench.txt")
  STAMP="$VENV/.grove-pip-stamp-bench"
fi
want_stamp="$(cat "$CONSTRAINTS" "$ROOT/requirements.txt" "${REQS[@]}" | sha256sum | cut -d' ' -f1)"

pip_install() {
  local t0 r args=()
  t0=$(date +%s)
  for r in "${REQS[@]}"; do args+=(-r "$r"); done
  "$PY" -m pip install -q --disable-pip-version-check --no-input \
    -c "$CONSTRAINTS" "${args[@]}" >>"$LOG" 2>&1 || die "pip install failed"
  echo "$want_stamp" >"$STAMP"
  log "pip: installed $(basename -a "${REQS[@]}" | tr '\n' ' ')(numpy==$DEB_NUMPY kept) in $(($(date +%s) - t0)) s"
}
did_pip=0
if [[ "${GROVE_SETUP_FORCE_PIP:-0}" != 1 && -f "$STAMP" && "$(cat "$STAMP")" == "$want_stamp" ]]; then
  log "pip: skipped, $(basename -a "${REQS[@]}" | tr '\n' ' ')unchanged since last install"
else
  pip_install
  did_pip=1
fi
[[ "$BENCH" == 1 ]] || log "pip: benchmark peers (IREE, JAX, optax, DyNet) not requested; GROVE_BENCH=1 installs them"
# A numpy inside the venv (installed by hand, say) shadows Debian's: remove it.
if compgen -G "$VENV/lib/python3*/site-packages/numpy" >/dev/null; then
  log "pip: removing the venv's own numpy, which shadows Debian's $DEB_NUMPY"
  "$PY" -m pip uninstall -q -y numpy >>"$LOG" 2>&1 || die "pip uninstall numpy failed"
fi

# ---------------------------------------------------------------- 4. smoke test
smoke() {
  GROVE_EXPECT_NUMPY="$DEB_NUMPY" GROVE_BENCH="$BENCH" "$PY" - <<'EOF'
import os, sys
import numpy as np
want = os.environ["GROVE_EXPECT_NUMPY"]
assert np.__version__ == want, f"numpy {np.__version__} from {np.__file__}, want Debian's {want}"
assert np.__file__.startswith("/usr/lib/python3/dist-packages/"), f"numpy shadowed: {np.__file__}"
import torch, sklearn, safetensors.numpy, onnx, onnxruntime, tokenizers
import nanobind, scikit_build_core, pytest
a = np.arange(6, dtype=np.float32).reshape(2, 3)
t = torch.from_numpy(a) * 2
assert t.numpy().tolist() == [[0, 2, 4], [6, 8, 10]], "torch <-> numpy round trip broken"
vers = [f"python {sys.version.split()[0]}", f"numpy {np.__version__}", f"torch {torch.__version__}",
        f"sklearn {sklearn.__version__}", f"onnx {onnx.__version__}", f"onnxruntime {onnxruntime.__version__}",
        f"tokenizers {tokenizers.__version__}"]
if os.environ.get("GROVE_BENCH") == "1":
    import iree.compiler, iree.runtime
    import iree.runtime.version as irv
    vers.append(f"iree {irv.VERSION}")
    import jax, optax
    vers += [f"jax {jax.__version__}", f"optax {optax.__version__}"]
    # _dynet alone: `import dynet` would also start DyNet (512 MB of pools).
    import _dynet, importlib.metadata
    vers.append(f"dynet38 {importlib.metadata.version('dyNET38')}")
print(", ".join(vers))
EOF
}
if ! versions="$(smoke 2>>"$LOG")"; then
  if ((did_pip == 0)); then
    log "smoke test failed with the skipped pip step; reinstalling"
    pip_install
    versions="$(smoke 2>>"$LOG")" || die "smoke test of $VENV failed; rm -rf $VENV and rerun to rebuild it"
  else
    die "smoke test of $VENV failed; rm -rf $VENV and rerun to rebuild it"
  fi
fi
log "ok: $versions"

# ---------------------------------------------------------------- 5. JAX venv
if [[ "$BENCH" == 1 ]]; then
  JAX_PY="$JAX_VENV/bin/python"
  JAX_REQS="$ROOT/requirements-jax.txt"
  JAX_STAMP="$JAX_VENV/.grove-pip-stamp-jax"
  if venv_from_debian "$JAX_VENV" false; then
    log "jax venv: skipped, $JAX_VENV already exists (Debian python3, no system site packages)"
  else
    if [[ -e "$JAX_VENV" ]]; then
      log "jax venv: $JAX_VENV exists but was not made from $SYS_PY without system site packages; recreating"
      rm -rf "$JAX_VENV"
    fi
    "$SYS_PY" -m venv "$JAX_VENV" >>"$LOG" 2>&1 || die "creating the JAX venv failed"
    log "jax venv: created $JAX_VENV"
  fi
  jax_want_stamp="$(sha256sum "$JAX_REQS" | cut -d' ' -f1)"
  jax_pip_install() {
    local t0
    t0=$(date +%s)
    "$JAX_PY" -m pip install -q --disable-pip-version-check --no-input \
      -r "$JAX_REQS" >>"$LOG" 2>&1 || die "pip install into $JAX_VENV failed"
    echo "$jax_want_stamp" >"$JAX_STAMP"
    log "jax venv: pip installed requirements-jax.txt in $(($(date +%s) - t0)) s"
  }
  jax_did_pip=0
  if [[ "${GROVE_SETUP_FORCE_PIP:-0}" != 1 && -f "$JAX_STAMP" && "$(cat "$JAX_STAMP")" == "$jax_want_stamp" ]]; then
    log "jax venv: pip skipped, requirements-jax.txt unchanged since last install"
  else
    jax_pip_install
    jax_did_pip=1
  fi
  # The pinned versions as imported (not pip's metadata), numpy 2 from the venv
  # itself, and one jitted, differentiated Adam step on the CPU.
  jax_smoke() {
    GROVE_JAX_REQS="$JAX_REQS" "$JAX_PY" - <<'EOF'
import os, re, sys
import numpy as np, jax, jaxlib, optax, jax.numpy as jnp, safetensors.numpy
pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", open(os.environ["GROVE_JAX_REQS"]).read(), re.M))
for name, mod in (("jax", jax), ("jaxlib", jaxlib), ("optax", optax), ("numpy", np)):
    assert mod.__version__ == pins[name], f"{name} {mod.__version__}, requirements-jax.txt pins {pins[name]}"
assert np.__file__.startswith(sys.prefix), f"numpy from {np.__file__}, not from {sys.prefix}"
assert jax.default_backend() == "cpu", jax.default_backend()
opt = optax.adam(1e-3)

@jax.jit
def step(p, s, x):
    g = jax.grad(lambda p: jnp.sum((x @ p["w"]) ** 2))(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s

p = {"w": jnp.ones((4, 3))}
w = np.asarray(step(p, opt.init(p), jnp.ones((2, 4)))[0]["w"])
assert w.shape == (4, 3) and np.allclose(w, 1 - 1e-3, atol=1e-6), w
print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, optax {optax.__version__}, numpy {np.__version__}")
EOF
  }
  if ! jax_versions="$(jax_smoke 2>>"$LOG")"; then
    if ((jax_did_pip == 0)); then
      log "jax venv: smoke test failed with the skipped pip step; reinstalling"
      jax_pip_install
      jax_versions="$(jax_smoke 2>>"$LOG")" || die "smoke test of $JAX_VENV failed; rm -rf $JAX_VENV and rerun to rebuild it"
    else
      die "smoke test of $JAX_VENV failed; rm -rf $JAX_VENV and rerun to rebuild it"
    fi
  fi
  log "ok: $JAX_VENV: $jax_versions (bench/train_step.py's JAX peer)"
fi

# ---------------------------------------------------------------- 6. BERT corpus
corpus="$("$PY" "$ROOT/models/bert/make_corpus.py" --quiet 2>>"$LOG")" ||
  die "building the BERT corpus failed (models/bert/make_corpus.py)"
log "corpus: $corpus"

ms=$((($(date +%s%N) - START_NS) / 1000000))
rm -f "$LOG"
log "done in $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s; use $VENV/bin/python"
