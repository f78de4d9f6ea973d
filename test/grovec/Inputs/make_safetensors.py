"""Writes small safetensors files, valid and broken, for Inputs/affine.mlir
(params `w`: f32[2x2] and `b`: f32[2]).

usage: make_safetensors.py DIR

Writes DIR/<case>.safetensors for every case below. The format is an 8-byte
little-endian header length N, N bytes of JSON, then the data; built by hand
so that broken files can be written too.
"""

import json
import os
import struct
import sys

W_DATA = struct.pack("<4f", 1, 2, 3, 4)
B_DATA = struct.pack("<2f", 10, 20)
DATA = W_DATA + B_DATA


def tensor(shape, begin, end, dtype="F32"):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


W = tensor([2, 2], 0, 16)
B = tensor([2], 16, 24)


def image(header, data=DATA, raw=None):
    h = raw if raw is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


CASES = {
    "good": image({"w": W, "b": B}),
    # Metadata, keys in another order, a gap between tensors and trailing
    # bytes are all fine.
    "good_extras": image({"__metadata__": {"format": "pt"},
                          "b": tensor([2], 20, 28), "w": W},
                         W_DATA + b"\0" * 4 + B_DATA + b"trailing"),
    "missing_tensor": image({"w": W}),
    "extra_tensor": image({"w": W, "b": B, "c": tensor([2], 24, 32)},
                          DATA + B_DATA),
    "wrong_shape": image({"w": tensor([1, 4], 0, 16), "b": B}),
    "wrong_rank": image({"w": tensor([4], 0, 16), "b": B}),
    "wrong_dtype": image({"w": W, "b": tensor([2], 16, 20, "F16")}),
    "offsets_past_end": image({"w": W, "b": tensor([2], 16, 32)}),
    "offsets_wrong_size": image({"w": W, "b": tensor([2], 16, 20)}),
    "offsets_reversed": image({"w": W, "b": tensor([2], 24, 16)}),
    "offsets_negative": image({"w": tensor([2, 2], -8, 8), "b": B}),
    "offsets_missing": image({"w": {"dtype": "F32", "shape": [2, 2]},
                              "b": B}),
    # Cut inside the JSON header: the length points past the end of file.
    "truncated_header": image({"w": W, "b": B})[:40],
    # Cut inside the data: b's byte range points past the end of file.
    "truncated_data": image({"w": W, "b": B})[:-4],
    "shorter_than_length": b"\x10\0\0",
    "empty": b"",
    "not_json": image(None, raw=b"this is not JSON"),
    "not_object": image(None, raw=b"[1, 2, 3]"),
    # Valid for a lax reader, rejected by libgrove_rt (docs/abi.md, Weights).
    "overlap": image({"w": W, "b": tensor([2], 8, 16)}),
    "duplicate_key": image(None, raw=json.dumps({"w": W, "b": B}).encode()[:-1]
                           + b', "b": ' + json.dumps(B).encode() + b"}"),
    "metadata_not_object": image({"__metadata__": "pt", "w": W, "b": B}),
    "metadata_not_strings": image({"__metadata__": {"epoch": 3},
                                   "w": W, "b": B}),
    "too_deep": image({"__metadata__": {"a": {"b": {"c": "d"}}},
                       "w": W, "b": B}),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in CASES.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
