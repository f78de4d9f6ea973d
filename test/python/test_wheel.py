"""The package as a wheel: `pip wheel` of the project (from the build tree
the tests run on) makes one that installs into a fresh virtual environment,
offline, and compiles and calls a model there."""
import glob
import os
import subprocess
import sys

from conftest import ROOT


def test_wheel_installs_and_runs(tmp_path):
    build = os.environ.get("GROVE_BUILD_DIR", os.path.join(ROOT, "build"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q",
                    "--no-build-isolation", "--no-deps", "-w", str(dist),
                    f"--config-settings=build-dir={build}", ROOT],
                   check=True, capture_output=True, timeout=900)
    [wheel] = glob.glob(str(dist / "grove-*.whl"))
    env_dir = tmp_path / "venv"
    # Debian's python with its site packages (numpy), as .venv is made.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--system-site-packages",
                    str(env_dir)], check=True, timeout=300)
    python = str(env_dir / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index",
                    wheel], check=True, capture_output=True, timeout=300)
    code = """
import grove, numpy as np
assert grove.__file__.startswith(%r), grove.__file__
m = grove.load(grove.compile('''module @t {
  func.func @f(%%a: tensor<3xf32>) -> tensor<3xf32> {
    %%b = grove.exp %%a : tensor<3xf32>
    return %%b : tensor<3xf32>
  }
}'''))
x = np.array([0.0, 1.0, -2.0], np.float32)
np.testing.assert_allclose(m.f(x), np.exp(x.astype(np.float64)), rtol=1e-6)
print("ok")
""" % str(env_dir)
    out = subprocess.run([python, "-c", code], cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", \
        out.stdout + out.stderr
