#!/usr/bin/env python3
"""Builds the masked-language-model corpus for Grove's BERT-style encoders.

    .venv/bin/python models/bert/make_corpus.py             # -> build/data/bert
    .venv/bin/python models/bert/make_corpus.py --out DIR --vocab-size 8192

No download: the text is English prose that every Debian 12 machine with
python3 has, in the standard library /usr/lib/python3.11 of the packages
libpython3.11-minimal and libpython3.11-stdlib:

* every module, class and function docstring of its .py files, read with
  `ast` (no import), cleaned by ast.get_docstring (dedented, tabs expanded),
  interactive examples removed (from a `>>>` line to the next blank line),
  and kept when at least MIN_DOCSTRING characters remain. A file's kept
  docstrings, in source order and joined by blank lines, are one document,
  named by the file's path relative to the library ("json/decoder.py").
  Skipped: directories test/, tests/, __pycache__/, site-packages/,
  dist-packages/, and those that other, optional Debian packages put there
  (idlelib/ idle-python3.11, tkinter/ and turtledemo/ python3-tk,
  lib2to3/ python3-lib2to3, distutils/ python3-distutils, ensurepip/
  python3.11-venv), so the corpus does not depend on what else is installed;
* the Language Reference topics that pydoc shows (pydoc_data/topics.py, a
  dict of plain-text pages, read with ast.literal_eval): one document per
  topic, named "pydoc_data/topics.py#KEY".

/usr/share/doc is not used: Debian keeps most of it gzipped, and minimal
images (Docker's debian slim) drop all of it but the copyright files.

Documents go to the validation split when the first 8 bytes of
sha256("grove-bert-split:" + NAME), little-endian, mod 100 are below
--valid-percent (default 5), else to training: a document's split depends
on its name alone, never on a random state or on the other documents.

Tokenizer: HuggingFace `tokenizers`, BERT-style WordPiece trained on the
training split alone: BertNormalizer (lowercase, accents stripped, control
characters dropped, CJK characters split), BertPreTokenizer (split on white
space and punctuation), WordPiece with "##" continuations, at most 100
characters a word (longer ones are [UNK]), the WordPiece decoder without its
English clean-up, and the specials [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4.
The vocabulary is learned here (learn_vocab: the merges of tokenizers'
WordPieceTrainer, whose tie-breaks change from run to run, with ties broken
by text instead); the library does the rest: normalizing, splitting,
encoding, decoding. --vocab-size (default 8192) is an upper bound (but every
character of the training text and its "##" form are tokens, whatever the
size): a small corpus (--limit-files) may give fewer.

Output files in --out (default build/data/bert under the repository root;
created if missing):

  vocab.txt       one token per line, UTF-8, "\\n" line ends; a token's id is
                  its line number counted from 0; no token contains white space
  tokenizer.json  the tokenizer (tokenizers.Tokenizer.from_file); encode()
                  adds [CLS] ... [SEP] (pairs: [CLS] A [SEP] B [SEP])
  train.bin       token ids as little-endian uint16, no header: every training
  valid.bin       (validation) document's ids in document order, each followed
                  by one [SEP] id; the file holds tokens * 2 bytes
  meta.json       vocab_size, special token ids, counts (documents, characters,
                  tokens with and without the [SEP]s), the source, the
                  tokenizers version, inputs_sha256 and each file's size and
                  sha256

The build is deterministic: the same inputs give byte-identical files,
whatever the number of threads. When meta.json records the same
inputs_sha256 (this script, tokenizers' version, the options, and the path
and bytes of every input file) and every output file still has its recorded
sha256, the script says so and exits at once, so scripts/setup.sh runs it
every time. --force rebuilds anyway. Outputs are
written to temporary names and renamed, meta.json last.

models/bert/corpus.py reads the files (load) and packs them into fixed-length
sequences (sequences).
"""
import argparse
import ast
import collections
import hashlib
import heapq
import json
import os
import sys
import time

FORMAT = 1  # bump when the output format changes
STDLIB = "/usr/lib/python3.11"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(ROOT, "build", "data", "bert")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MIN_DOCSTRING = 40
MIN_FREQUENCY = 2  # a merge needs a pair seen at least this often
MAX_WORD = 100  # longer words encode as [UNK]
SKIP_DIRS = {"test", "tests", "__pycache__", "site-packages", "dist-packages",
             "idlelib", "tkinter", "turtledemo", "lib2to3", "distutils",
             "ensurepip", "lib-dynload"}
TOPICS = "pydoc_data/topics.py"
OUTPUTS = ["vocab.txt", "tokenizer.json", "train.bin", "valid.bin"]


def source_files(stdlib, limit=None):
    """Relative paths of the .py files used, sorted; the first `limit` only."""
    found = []
    for d, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(x for x in dirs
                         if x not in SKIP_DIRS and not x.startswith("config-"))
        for f in files:
            if f.endswith(".py"):
                found.append(os.path.relpath(os.path.join(d, f), stdlib)
                             .replace(os.sep, "/"))
    found.sort()
    return found[:limit] if limit is not None else found


def strip_examples(text):
    """Drops interactive examples: a `>>>` line up to the next blank line."""
    out, in_example = [], False
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith(">>>"):
            in_example = True
            continue
        if in_example:
            if s:
                continue
            in_example = False
        if s or (out and out[-1].strip()):  # at most one blank line in a row
            out.append(line)
    return "\n".join(out).strip()


def docstrings(tree):
    """The module's, classes' and functions' docstrings in source order."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                yield doc
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def documents(stdlib, files):
    """[(name, text)] in a fixed order: files by path, topics by key."""
    docs = []
    for rel in files:
        with open(os.path.join(stdlib, rel), "rb") as f:
            tree = ast.parse(f.read(), filename=rel)
        kept = [t for t in (strip_examples(d) for d in docstrings(tree))
                if len(t) >= MIN_DOCSTRING]
        if kept:
            docs.append((rel, "\n\n".join(kept)))
        if rel == TOPICS:
            for node in tree.body:
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and getattr(node.targets[0], "id", None) == "topics"):
                    topics = ast.literal_eval(node.value)
                    for key in sorted(topics):
                        text = topics[key].strip()
                        if len(text) >= MIN_DOCSTRING:
                            docs.append((f"{TOPICS}#{key}", text))
    return docs


def is_valid(name, percent):
    h = hashlib.sha256(("grove-bert-split:" + name).encode()).digest()
    return int.from_bytes(h[:8], "little") % 100 < percent


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def inputs_hash(stdlib, files, args, tok_version):
    """Everything the outputs depend on: change any and the corpus is rebuilt."""
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(json.dumps({"format": FORMAT, "tokenizers": tok_version,
                         "vocab_size": args.vocab_size,
                         "valid_percent": args.valid_percent,
                         "limit_files": args.limit_files,
                         "python": sys.version_info[:2]}).encode())
    for rel in files:
        with open(os.path.join(stdlib, rel), "rb") as f:
            data = f.read()
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def up_to_date(out, want):
    try:
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        if meta.get("inputs_sha256") != want:
            return None
        for name, rec in meta["files"].items():
            p = os.path.join(out, name)
            if os.path.getsize(p) != rec["bytes"] or sha256_file(p) != rec["sha256"]:
                return None
        return meta
    except (OSError, ValueError, KeyError, TypeError):
        return None


def learn_vocab(words, vocab_size, min_frequency):
    """WordPiece vocabulary learning, as tokenizers' WordPieceTrainer does it.

    `words` maps each pre-tokenized word to its count. Every character is a
    token, and so is "##" + each character that occurs after a word's first;
    then, until vocab_size tokens exist, the most frequent adjacent pair of
    pieces (counted over words x counts) is merged, the right piece losing
    its "##". tokenizers' trainer breaks ties between equally frequent pairs
    by ids that it hands out in hash-map order, which differs from one
    process to the next; here ties go to the pair whose (left, right) text is
    smallest, so the vocabulary depends on the text alone. Returns the
    tokens in id order (specials first, then the characters, the "##"
    characters, and the merges in the order made).
    """
    names = sorted(words)
    freq = [words[w] for w in names]
    pieces = [[w[0]] + ["##" + c for c in w[1:]] for w in names]
    vocab = list(SPECIALS)
    vocab += sorted({c for w in names for c in w} - set(vocab))
    vocab += sorted({"##" + c for w in names for c in w[1:]} - set(vocab))
    known = set(vocab)

    def pairs(p):
        return zip(p, p[1:])

    count = collections.Counter()
    where = collections.defaultdict(set)
    for i, p in enumerate(pieces):
        for pr in pairs(p):
            count[pr] += freq[i]
            where[pr].add(i)
    heap = [(-c, a, b) for (a, b), c in count.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        c, a, b = heapq.heappop(heap)
        if -c != count[(a, b)]:  # stale entry: requeue with today's count
            if count[(a, b)] > 0:
                heapq.heappush(heap, (-count[(a, b)], a, b))
            continue
        if -c < max(min_frequency, 1):
            break
        new = a + (b[2:] if b.startswith("##") else b)
        if new not in known:
            known.add(new)
            vocab.append(new)
        delta = collections.Counter()
        for i in sorted(where.pop((a, b), ())):
            old, p, j = pieces[i], [], 0
            while j < len(old):
                if j + 1 < len(old) and old[j] == a and old[j + 1] == b:
                    p.append(new)
                    j += 2
                else:
                    p.append(old[j])
                    j += 1
            if len(p) == len(old):
                continue
            pieces[i] = p
            for pr in pairs(old):
                delta[pr] -= freq[i]
            for pr in pairs(p):
                delta[pr] += freq[i]
                where[pr].add(i)
        for pr, d in sorted(delta.items()):
            if d:
                count[pr] += d
                if count[pr] > 0:
                    heapq.heappush(heap, (-count[pr], pr[0], pr[1]))
    return vocab


def build_tokenizer(train_texts, vocab_size):
    from tokenizers import (Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors)
    normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None,
        lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words = collections.Counter()
    for t in train_texts:
        words.update(w for w, _ in
                     pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(t)))
    vocab = learn_vocab(words, vocab_size, MIN_FREQUENCY)
    tok = Tokenizer(models.WordPiece(
        {t: i for i, t in enumerate(vocab)}, unk_token="[UNK]",
        continuing_subword_prefix="##", max_input_chars_per_word=MAX_WORD))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tok.add_special_tokens(SPECIALS)
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    assert [ids[s] for s in SPECIALS] == list(range(len(SPECIALS))), ids
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    return tok


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Build the BERT MLM corpus (docstring prose of Python's "
        "standard library, WordPiece tokens).")
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="output directory (default: build/data/bert in the "
                    "repository)")
    ap.add_argument("--vocab-size", type=int, default=8192,
                    help="WordPiece vocabulary size, at most (default 8192)")
    ap.add_argument("--valid-percent", type=int, default=5,
                    help="share of documents, by hash of their name, kept for "
                    "validation (default 5)")
    ap.add_argument("--limit-files", type=int, default=None, metavar="N",
                    help="use only the first N source files in path order "
                    "(for tests)")
    ap.add_argument("--stdlib", default=STDLIB, help=argparse.SUPPRESS)
    ap.add_argument("--force", action="store_true",
                    help="rebuild even when the outputs are up to date")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print one summary line only")
    args = ap.parse_args(argv)
    if not 5 + 1 <= args.vocab_size <= 65536:
        ap.error("--vocab-size must be in [6, 65536] (ids are uint16)")
    if not 0 <= args.valid_percent <= 100:
        ap.error("--valid-percent must be in [0, 100]")
    if args.limit_files is not None and args.limit_files < 1:
        ap.error("--limit-files must be at least 1")

    t0 = time.monotonic()
    try:
        import tokenizers
    except ImportError:
        sys.exit("make_corpus: the tokenizers package is missing: run "
                 "scripts/setup.sh, or pip install it from requirements.txt")
    out = os.path.abspath(args.out)
    stdlib = os.path.abspath(args.stdlib)
    if not os.path.isdir(stdlib):
        sys.exit(f"make_corpus: {stdlib} not found (Debian's "
                 "libpython3.11-stdlib provides it)")
    files = source_files(stdlib, args.limit_files)
    want = inputs_hash(stdlib, files, args, tokenizers.__version__)
    meta = None if args.force else up_to_date(out, want)
    if meta is not None:
        print(f"skipped, {out} is up to date ({summary(meta)})")
        return 0

    import numpy as np
    docs = documents(stdlib, files)
    train = [(n, t) for n, t in docs if not is_valid(n, args.valid_percent)]
    valid = [(n, t) for n, t in docs if is_valid(n, args.valid_percent)]
    if not train:
        sys.exit("make_corpus: no training document")
    t_read = time.monotonic()
    tok = build_tokenizer([t for _, t in train], args.vocab_size)
    t_train = time.monotonic()
    vocab = sorted(tok.get_vocab(with_added_tokens=True).items(),
                   key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab))), "ids not dense"
    if len(vocab) > 65536:  # more distinct characters than uint16 ids
        sys.exit(f"make_corpus: {len(vocab)} tokens do not fit uint16 ids")
    for t, _ in vocab:
        assert t and len(t.splitlines()) == 1 and not any(c.isspace() for c in t), repr(t)
    sep = SPECIALS.index("[SEP]")

    def encode(split):
        encs = tok.encode_batch([t for _, t in split], add_special_tokens=False)
        parts = []
        for e in encs:
            parts.append(np.asarray(e.ids, dtype="<u2"))
            parts.append(np.array([sep], dtype="<u2"))
        ids = np.concatenate(parts) if parts else np.zeros(0, "<u2")
        return ids, sum(len(e.ids) for e in encs)

    train_ids, train_tokens = encode(train)
    valid_ids, valid_tokens = encode(valid)
    unk = SPECIALS.index("[UNK]")
    os.makedirs(out, exist_ok=True)
    data = {
        "vocab.txt": "".join(t + "\n" for t, _ in vocab).encode("utf-8"),
        "tokenizer.json": tok.to_str(pretty=True).encode("utf-8") + b"\n",
        "train.bin": train_ids.tobytes(),
        "valid.bin": valid_ids.tobytes(),
    }
    for name in OUTPUTS:
        write_atomic(os.path.join(out, name), data[name])

    def split_meta(split, ids, tokens):
        return {"documents": len(split), "characters": sum(len(t) for _, t in split),
                "tokens": tokens, "tokens_with_sep": int(ids.size),
                "unk_tokens": int((ids == unk).sum())}

    meta = {
        "format": FORMAT,
        "description": "Grove BERT MLM corpus: docstrings of Python's standard "
                       "library and pydoc's Language Reference topics, WordPiece",
        "source": {
            "path": stdlib,
            "python": "%d.%d" % sys.version_info[:2],
            "files": len(files),
            "limit_files": args.limit_files,
            "skipped_dirs": sorted(SKIP_DIRS),
            "min_docstring_chars": MIN_DOCSTRING,
        },
        "tokenizer": {
            "library": "tokenizers", "version": tokenizers.__version__,
            "model": "WordPiece", "normalizer": "BertNormalizer(lowercase=True)",
            "pre_tokenizer": "BertPreTokenizer", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": MAX_WORD, "min_frequency": MIN_FREQUENCY,
            "vocabulary": "learn_vocab in make_corpus.py (WordPieceTrainer's "
                          "merges, ties broken by the pieces' text)",
            "requested_vocab_size": args.vocab_size,
        },
        "vocab_size": len(vocab),
        "special_tokens": {s: SPECIALS.index(s) for s in SPECIALS},
        "dtype": "uint16 little-endian",
        "layout": "each document's ids followed by one [SEP]",
        "split": {"rule": "sha256('grove-bert-split:' + name)[:8] little-endian "
                          "% 100 < valid_percent -> valid",
                  "valid_percent": args.valid_percent},
        "train": split_meta(train, train_ids, train_tokens),
        "valid": split_meta(valid, valid_ids, valid_tokens),
        "documents": {"train": [n for n, _ in train],
                      "valid": [n for n, _ in valid]},
        "inputs_sha256": want,
        "files": {name: {"bytes": len(data[name]),
                         "sha256": hashlib.sha256(data[name]).hexdigest()}
                  for name in OUTPUTS},
    }
    write_atomic(os.path.join(out, "meta.json"),
                 (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode())
    t_end = time.monotonic()
    print(f"built {out} in {t_end - t0:.1f} s ({summary(meta)})")
    if not args.quiet:
        print(f"  read {len(files)} files -> {len(docs)} documents in "
              f"{t_read - t0:.1f} s; tokenizer trained in {t_train - t_read:.1f} s; "
              f"encoded and written in {t_end - t_train:.1f} s; "
              f"tokenizers {tokenizers.__version__}")
    return 0


def summary(meta):
    tr, va = meta["train"], meta["valid"]
    return (f"vocab {meta['vocab_size']}; train {tr['documents']} docs, "
            f"{tr['characters']} chars, {tr['tokens_with_sep']} tokens; valid "
            f"{va['documents']} docs, {va['characters']} chars, "
            f"{va['tokens_with_sep']} tokens")


if __name__ == "__main__":
    sys.exit(main())
