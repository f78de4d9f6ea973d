"""Prints every model descriptor in a dump of the grove_models section.

A loader's view of docs/abi.md: NUL-separated JSON documents, read with
nothing but the standard library.
"""
import json
import sys


def tensor(t):
    return f"{t['name']} {t['dtype']} {t['shape']}"


def main(path):
    data = open(path, "rb").read()
    for raw in data.split(b"\0"):
        if not raw.strip(b"\0"):
            continue
        d = json.loads(raw.decode("utf-8"))
        print(f"module {d['module']} version {d['version']} target {d['target']}")
        for s in d["state"]:
            kind = f"init {s['init']}" if "init" in s else "weight"
            print(f"state {tensor(s)} {kind}")
        for e in d["entries"]:
            args = [f"input {a['input']}" if "input" in a
                    else f"{a['access']} {a['state']}" for a in e["args"]]
            inputs = [tensor(t) + "".join(
                f" {p['kind']}" for p in t.get("preconditions", []))
                for t in e["inputs"]]
            outputs = [tensor(t) for t in e["outputs"]]
            print(f"entry {e['name']} args {args} inputs {inputs} "
                  f"outputs {outputs}")


if __name__ == "__main__":
    main(sys.argv[1])
