"""scripts/check_trace.py, the GPU check's reading of a trace: it accepts
GPU spans inside the entry call that queued them and refuses the rest."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_trace.py")


def run(tmp_path, events, *args):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return subprocess.run([sys.executable, SCRIPT, str(path), *args],
                          capture_output=True, text=True)


def span(cat, name, ts, dur, tid=1):
    return {"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur,
            "pid": 1, "tid": tid}


GPU = {"name": "thread_name", "ph": "M", "pid": 1, "tid": 65536,
       "args": {"name": "GPU 0 (H200) stream"}}


def test_gpu_spans_inside_their_call(tmp_path):
    events = [GPU, span("entry", "forward", 100, 50),
              span("gpu.kernel", "forward_kernel", 110, 5, 65536),
              span("gpu.library", "cublas gemm", 120, 20, 65536)]
    r = run(tmp_path, events, "--require", "gpu.kernel")
    assert r.returncode == 0, r.stderr
    assert "GPU 0 (H200) stream" in r.stdout
    assert "forward_kernel" in r.stdout


def test_gpu_span_outside_every_call_fails(tmp_path):
    events = [GPU, span("entry", "forward", 100, 50),
              span("gpu.kernel", "late", 400, 5, 65536)]
    r = run(tmp_path, events)
    assert r.returncode == 1 and "outside every entry call" in r.stderr


def test_missing_category_and_bad_file(tmp_path):
    r = run(tmp_path, [span("entry", "forward", 0, 1)], "--require",
            "gpu.kernel")
    assert r.returncode == 1 and "no spans of gpu.kernel" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = subprocess.run([sys.executable, SCRIPT, str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "not a trace" in r.stderr
