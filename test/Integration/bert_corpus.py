# RUN: %python %s
# The BERT corpus (models/bert/make_corpus.py, docs/bert.md) built from the
# first 40 files of the standard library into a temporary directory: every
# file is written; train.bin and valid.bin hold one [SEP]-terminated run of
# ids per document, every id below the vocabulary size, each run what the
# saved tokenizer encodes for that document, and decoding it (every
# document without [UNK]) gives the document's normalised (lowercased) text
# up to white space; the
# specials sit at the ids meta.json gives, in vocab.txt and tokenizer.json
# alike; no document is in both splits and each is where its name's hash
# puts it. A second build is byte-identical, a third run with the outputs in
# place skips, and a damaged output is rebuilt. corpus.load/sequences read
# and pack the files. Takes a few seconds.
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))
import corpus  # noqa: E402
import make_corpus as mc  # noqa: E402

SCRIPT = os.path.join(ROOT, "models", "bert", "make_corpus.py")
ARGS = ["--limit-files", "40", "--vocab-size", "2000", "--valid-percent", "20"]
FILES = ["vocab.txt", "tokenizer.json", "train.bin", "valid.bin", "meta.json"]


def build(out, *extra):
    r = subprocess.run([sys.executable, SCRIPT, "--out", out, *ARGS, *extra],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def contents(d):
    out = {}
    for f in FILES:
        with open(os.path.join(d, f), "rb") as fh:
            out[f] = fh.read()
    return out


def squash(s):
    return "".join(s.split())


with tempfile.TemporaryDirectory() as tmp:
    a = os.path.join(tmp, "a", "nested")  # the script makes missing parents
    b = os.path.join(tmp, "b")
    assert build(a).startswith("built ")
    for f in FILES:
        assert os.path.getsize(os.path.join(a, f)) > 0, f
    with open(os.path.join(a, "meta.json")) as f:
        meta = json.load(f)
    tok = Tokenizer.from_file(os.path.join(a, "tokenizer.json"))
    with open(os.path.join(a, "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().split("\n")
    assert vocab[-1] == "", "vocab.txt ends with a newline"
    vocab = vocab[:-1]
    V = meta["vocab_size"]
    assert len(vocab) == V == tok.get_vocab_size() and V <= 2000, (len(vocab), V)
    assert tok.get_vocab() == {t: i for i, t in enumerate(vocab)}
    assert meta["special_tokens"] == {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2,
                                      "[SEP]": 3, "[MASK]": 4}
    for s, i in meta["special_tokens"].items():
        assert vocab[i] == s and tok.token_to_id(s) == i, s
    assert tok.encode("hello").ids[0] == meta["special_tokens"]["[CLS]"]
    assert tok.encode("hello").ids[-1] == meta["special_tokens"]["[SEP]"]

    # The documents, rebuilt from the same sources, against the files.
    docs = dict(mc.documents(mc.STDLIB, mc.source_files(mc.STDLIB, 40)))
    names = meta["documents"]
    assert names["train"] and names["valid"], names
    assert not set(names["train"]) & set(names["valid"])
    assert sorted(names["train"] + names["valid"]) == sorted(docs)
    for n in names["valid"]:
        assert mc.is_valid(n, 20), n
    for n in names["train"]:
        assert not mc.is_valid(n, 20), n
    sep = meta["special_tokens"]["[SEP]"]
    checked = 0
    for split in ("train", "valid"):
        ids = np.fromfile(os.path.join(a, split + ".bin"), dtype="<u2")
        assert ids.size == meta[split]["tokens_with_sep"]
        assert ids.size * 2 == os.path.getsize(os.path.join(a, split + ".bin"))
        assert int(ids.max()) < V
        assert ids[-1] == sep
        ends = np.flatnonzero(ids == sep)
        assert len(ends) == len(names[split]) == meta[split]["documents"]
        starts = np.concatenate([[0], ends[:-1] + 1])
        assert meta[split]["characters"] == sum(len(docs[n]) for n in names[split])
        for k, n in enumerate(names[split]):
            run = ids[starts[k]:ends[k]].tolist()
            assert run == tok.encode(docs[n], add_special_tokens=False).ids, n
            if mc.SPECIALS.index("[UNK]") not in run:
                text = tok.normalizer.normalize_str(docs[n])
                assert text == text.lower()
                got = tok.decode(run)
                assert squash(got) == squash(text), (n, got[:200], text[:200])
                checked += 1
    assert checked >= len(names["train"]), checked  # train has every char

    # Deterministic: a fresh build elsewhere is byte-identical.
    assert build(b).startswith("built ")
    first = contents(a)
    assert contents(b) == first
    # Up to date: skipped, nothing rewritten.
    assert build(a).startswith("skipped, "), "second run should skip"
    assert contents(a) == first
    # A damaged output is noticed and rebuilt to the same bytes.
    with open(os.path.join(a, "valid.bin"), "r+b") as f:
        f.write(b"\xff\xff")
    assert build(a).startswith("built ")
    assert contents(a) == first
    # Other options give another corpus (the options are part of the key).
    assert build(a, "--vocab-size", "1500").startswith("built ")
    assert json.load(open(os.path.join(a, "meta.json")))["vocab_size"] <= 1500

    # The reader and the packer.
    c = corpus.load(b)
    assert c.vocab == vocab and c.sep_id == sep and c.cls_id == 2 and c.pad_id == 0
    assert c.mask_id == 4 and c.unk_id == 1
    S = 32
    x = corpus.sequences(c.train, S, c.cls_id, c.sep_id)
    assert x.dtype == np.int32 and x.shape == (c.train.size // (S - 2), S)
    assert (x[:, 0] == c.cls_id).all() and (x[:, -1] == c.sep_id).all()
    assert (x[:, 1:-1].reshape(-1) == c.train[:x.shape[0] * (S - 2)]).all()
    y = corpus.sequences(c.valid, S, c.cls_id, c.sep_id, offset=5, drop_last=False)
    rest = (c.valid.size - 5) % (S - 2)
    assert y.shape[0] == -(-(c.valid.size - 5) // (S - 2))
    if rest:
        assert y[-1, 1 + rest] == c.sep_id and (y[-1, 2 + rest:] == c.pad_id).all()
    assert (y[0, 1:-1] == c.valid[5:5 + S - 2]).all()
    m = corpus.load(b, mmap=True)
    assert (np.asarray(m.train) == c.train).all()

print(f"bert corpus: vocab {V}, train {meta['train']['documents']} docs / "
      f"{meta['train']['tokens_with_sep']} tokens, valid "
      f"{meta['valid']['documents']} docs / {meta['valid']['tokens_with_sep']} "
      f"tokens; {checked} documents decoded; deterministic; ok")
