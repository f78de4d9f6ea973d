"""Reads the BERT corpus that make_corpus.py writes (numpy only).

    import sys; sys.path.insert(0, "models/bert")
    import corpus
    c = corpus.load()                       # build/data/bert by default
    x = corpus.sequences(c.train, 128, c.cls_id, c.sep_id)   # [N, 128] int32

The files and their format are described in make_corpus.py's docstring and
docs/bert.md: train.bin / valid.bin are little-endian uint16 token ids, each
document followed by one [SEP]; vocab.txt has one token per line (id = line
number); meta.json has the counts and the special ids.
"""
import collections
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)),
                           "build", "data", "bert")

Corpus = collections.namedtuple(
    "Corpus", "train valid vocab meta pad_id unk_id cls_id sep_id mask_id")
Corpus.__doc__ = """train, valid: uint16 token streams; vocab: list of tokens
(index = id); meta: meta.json as a dict; *_id: the special tokens' ids."""


def load(out_dir=DEFAULT_DIR, mmap=False):
    """Loads a corpus directory; checks the files against meta.json's counts.

    mmap=True maps train.bin and valid.bin read-only instead of reading them.
    """
    with open(os.path.join(out_dir, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(out_dir, "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().split("\n")[:-1]
    if len(vocab) != meta["vocab_size"]:
        raise ValueError(f"{out_dir}/vocab.txt has {len(vocab)} tokens, "
                         f"meta.json says {meta['vocab_size']}")
    arrays = {}
    for split in ("train", "valid"):
        path = os.path.join(out_dir, split + ".bin")
        if mmap and os.path.getsize(path) > 0:
            a = np.memmap(path, dtype="<u2", mode="r")
        else:
            a = np.fromfile(path, dtype="<u2")
        if a.size != meta[split]["tokens_with_sep"]:
            raise ValueError(f"{path} holds {a.size} tokens, meta.json says "
                             f"{meta[split]['tokens_with_sep']}")
        arrays[split] = a
    sp = meta["special_tokens"]
    return Corpus(arrays["train"], arrays["valid"], vocab, meta, sp["[PAD]"],
                  sp["[UNK]"], sp["[CLS]"], sp["[SEP]"], sp["[MASK]"])


def sequences(tokens, seq_len, cls_id, sep_id, pad_id=0, offset=0,
              drop_last=True, dtype=np.int32):
    """Packs a token stream into rows of seq_len: [CLS] t... [SEP].

    Row k holds the seq_len - 2 consecutive tokens
    tokens[offset + k*(seq_len-2) : offset + (k+1)*(seq_len-2)] between one
    [CLS] and one [SEP]; a row may span documents (the stream's own [SEP]s
    stay where they are). offset (e.g. a different one each epoch) shifts
    the windows. The last, shorter window is dropped, or with
    drop_last=False padded with pad_id after its [SEP]. Returns a
    [rows, seq_len] array of dtype.
    """
    if seq_len < 3:
        raise ValueError("seq_len must be at least 3 ([CLS], a token, [SEP])")
    if offset < 0:
        raise ValueError("offset must be non-negative")
    body = seq_len - 2
    t = np.asarray(tokens)[offset:]
    full = t.size // body
    rest = t.size - full * body
    rows = full + (1 if rest and not drop_last else 0)
    out = np.full((rows, seq_len), pad_id, dtype=dtype)
    out[:, 0] = cls_id
    out[:full, 1:seq_len - 1] = t[:full * body].reshape(full, body)
    out[:full, seq_len - 1] = sep_id
    if rows > full:
        out[full, 1:1 + rest] = t[full * body:]
        out[full, 1 + rest] = sep_id
    return out
