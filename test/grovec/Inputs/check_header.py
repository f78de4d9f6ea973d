"""Compiles a model and checks the C interface grovec writes for it.

usage: check_header.py --cc CC --runtime-include DIR --lib-dir DIR
                       --libs "FLAGS" OUT MODEL [GROVEC ARGS...]

Runs `grovec MODEL -o OUT ARGS`. grovec may reject the model (exit 1 with an
error); if it accepts it, the header must compile as C99 and C++11 with
-Wall -Werror, and a program linked with the library must create a context
whose signatures (as the runtime parsed them from the embedded descriptor)
are exactly those the header carries as data: names, dtypes and shapes of
every param, entry, input and output. Prints one line:
  OK rejected: <error>
  OK accepted: <n> params, <n> entries, header and runtime agree
  BAD <what went wrong>
and exits 0 (OK) or 1 (BAD).
"""

import argparse
import glob
import os
import shlex
import subprocess
import sys

PROGRAM = r"""
#include "%(header)s"
#include <stdio.h>
#include <string.h>

static int bad;

static void same_sig(const char *what, const grove_tensor_sig *h,
                     const grove_tensor_sig *r) {
  if (strcmp(h->name, r->name) != 0) {
    printf("BAD %%s: header name '%%s', runtime name '%%s'\n", what, h->name,
           r->name);
    bad = 1;
    return;
  }
  if (h->dtype.code != r->dtype.code || h->dtype.bits != r->dtype.bits ||
      h->dtype.lanes != r->dtype.lanes || h->ndim != r->ndim) {
    printf("BAD %%s '%%s': dtype or rank differ\n", what, h->name);
    bad = 1;
    return;
  }
  for (int i = 0; i < h->ndim; ++i)
    if (h->shape[i] != r->shape[i]) {
      printf("BAD %%s '%%s': dimension %%d differs\n", what, h->name, i);
      bad = 1;
    }
}

int main(void) {
  grove_context *ctx = NULL;
  grove_status s = grove_context_create(&%(name)s_model, &ctx);
  if (s != GROVE_OK) {
    printf("BAD grove_context_create: %%s: %%s\n", grove_status_string(s),
           grove_last_error());
    return 1;
  }
  unsigned np = grove_context_num_params(ctx);
  unsigned ne = grove_context_num_entries(ctx);
  if (np != %(NAME)s_NUM_PARAMS || ne != %(NAME)s_NUM_ENTRIES) {
    printf("BAD counts: header %%d params %%d entries, runtime %%u %%u\n",
           (int)%(NAME)s_NUM_PARAMS, (int)%(NAME)s_NUM_ENTRIES, np, ne);
    return 1;
  }
  for (unsigned i = 0; i < np; ++i) {
    const grove_tensor_sig *r;
    grove_context_param(ctx, i, &r);
    same_sig("param", &%(params)s[i], r);
  }
  for (unsigned e = 0; e < ne; ++e) {
    const grove_entry_sig *h = &%(name)s_sig_entries[e], *r;
    grove_context_entry(ctx, e, &r);
    if (strcmp(h->name, r->name) != 0 || h->num_inputs != r->num_inputs ||
        h->num_outputs != r->num_outputs) {
      printf("BAD entry %%u: header '%%s', runtime '%%s'\n", e, h->name,
             r->name);
      return 1;
    }
    for (unsigned i = 0; i < h->num_inputs; ++i)
      same_sig("input", &h->inputs[i], &r->inputs[i]);
    for (unsigned i = 0; i < h->num_outputs; ++i)
      same_sig("output", &h->outputs[i], &r->outputs[i]);
  }
  grove_context_destroy(ctx);
  if (!bad)
    printf("OK accepted: %%u params, %%u entries, header and runtime agree\n",
           np, ne);
  return bad;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grovec", default="grovec")
    ap.add_argument("--cc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--libs", default="")
    ap.add_argument("out")
    ap.add_argument("model")
    ap.add_argument("args", nargs="*")
    # Options after MODEL (--name=...) are grovec's.
    a, extra = ap.parse_known_args()

    p = subprocess.run([a.grovec, a.model, "-o", a.out] + a.args + extra,
                       capture_output=True, text=True, errors="replace")
    if p.returncode != 0:
        err = [l for l in p.stderr.splitlines() if "error:" in l]
        if p.returncode == 1 and err:
            print("OK rejected: " + err[0])
            return 0
        print("BAD grovec exited %d: %s" % (p.returncode, p.stderr.strip()))
        return 1

    headers = glob.glob(os.path.join(a.out, "*.h"))
    libs = glob.glob(os.path.join(a.out, "lib*.a"))
    if len(headers) != 1 or len(libs) != 1:
        print("BAD outputs: %s" % sorted(os.listdir(a.out)))
        return 1
    header = os.path.basename(headers[0])
    name = header[:-2]
    inc = ["-I" + a.runtime_include, "-I" + a.out]
    for lang, std in (("c", "c99"), ("c++", "c++11")):
        c = subprocess.run([a.cc, "-x", lang, "-std=" + std, "-Wall",
                            "-Werror", "-fsyntax-only", "-include", header,
                            "-"] + inc, input="int grove_check;\n",
                           capture_output=True, text=True, errors="replace")
        if c.returncode != 0:
            first = [l for l in c.stderr.splitlines() if "error" in l][:2]
            print("BAD %s does not compile as %s: %s"
                  % (header, lang.upper(), " | ".join(first)))
            return 1

    with open(headers[0]) as f:
        has_params = ("%s_sig_params[]" % name) in f.read()
    src = os.path.join(a.out, "check_%s.c" % name)
    exe = os.path.join(a.out, "check_%s" % name)
    with open(src, "w") as f:
        f.write(PROGRAM % {
            "header": header, "name": name, "NAME": name.upper(),
            # No params: no array; the loop does not run.
            "params": "%s_sig_params" % name if has_params
            else "((const grove_tensor_sig *)0)"})
    c = subprocess.run([a.cc, "-std=c99", src, libs[0], "-L" + a.lib_dir,
                        "-Wl,-rpath," + a.lib_dir, "-lgrove_rt"] + inc +
                       shlex.split(a.libs) + ["-o", exe],
                       capture_output=True, text=True, errors="replace")
    if c.returncode != 0:
        print("BAD check program does not build: %s" % c.stderr.strip())
        return 1
    r = subprocess.run([exe], capture_output=True, text=True,
                       errors="replace")
    sys.stdout.write(r.stdout)
    if r.returncode != 0 and "BAD" not in r.stdout:
        print("BAD check program exited %d" % r.returncode)
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
