#!/usr/bin/env python3
"""make_bad_files.py: writes the binary bad inputs in tests/bad_inputs/safetensors/ and
tokenizer/ (hand-written JSON and text cases live beside them as plain files).

Each file breaks one rule of the format; cases.txt says which error each must give.
Pure standard library:  python3 tests/bad_inputs/make_bad_files.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(folder, name, data):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(HERE, folder, name), "wb") as f:
        f.write(data)


def st(header, data, pad=True):
    """A safetensors file from a header dict (written as given) and raw data bytes."""
    text = json.dumps(header, separators=(",", ":")).encode() if not isinstance(header, bytes) else header
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
w = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}
good = st(w, f32(1, 2, 3, 4))

S = "safetensors"
put(S, "empty.safetensors", b"")
put(S, "seven_bytes.safetensors", b"\x10\x00\x00\x00\x00\x00\x00")
put(S, "huge_header_claim.safetensors", struct.pack("<Q", 1 << 40) + good[8:])
put(S, "header_past_end.safetensors", struct.pack("<Q", 4096) + good[8:])
put(S, "truncated_data.safetensors", good[:-5])
put(S, "trailing_bytes.safetensors", good + b"\x00" * 8)
put(S, "offsets_past_end.safetensors", st({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 4000000000]}}, f32(1, 2, 3, 4)))
put(S, "offsets_reversed.safetensors", st({"w": {"dtype": "F32", "shape": [0], "data_offsets": [16, 0]}}, f32(1, 2, 3, 4)))
put(S, "offsets_overlap.safetensors", st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, f32(1, 2, 3)))
put(S, "offsets_gap.safetensors", st({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                       "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, f32(1, 2, 3)))
put(S, "shape_size_mismatch.safetensors", st({"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4)))
put(S, "shape_overflow.safetensors", st({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4)))
put(S, "shape_negative.safetensors", st({"w": {"dtype": "F32", "shape": [-1, 4], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4)))
put(S, "unknown_dtype.safetensors", st({"w": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4)))
put(S, "int_dtype.safetensors", st({"w": {"dtype": "I32", "shape": [4], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4)))
put(S, "missing_offsets.safetensors", st({"w": {"dtype": "F32", "shape": [4]}}, f32(1, 2, 3, 4)))
put(S, "not_json_header.safetensors", st(b'{"w": {"dtype": "F32", ', f32(1, 2, 3, 4)))
put(S, "header_not_object.safetensors", st(b'["w"]', b""))
put(S, "not_safetensors.safetensors", b"PK\x03\x04" + b"\x00" * 60)  # a zip (torch.save) file
put(S, "duplicate_name.safetensors", st(b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                         b'"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f32(1, 2)))
put(S, "metadata_not_strings.safetensors", st({"__metadata__": {"step": 10}, **w}, f32(1, 2, 3, 4)))

T = "tokenizer"
put(T, "not_json.json", "{type: char}")
put(T, "no_type.json", json.dumps({"chars": "abc"}))
put(T, "unknown_type.json", json.dumps({"type": "wordpiece", "vocab": ["a"]}))
put(T, "char_duplicate.json", json.dumps({"type": "char", "chars": "abca", "unk": False}))
put(T, "char_chars_not_string.json", json.dumps({"type": "char", "chars": ["a", "b"]}))
put(T, "bpe_merge_out_of_range.json", json.dumps({"type": "bpe", "merges": [[104, 101], [256, 9999]]}))
put(T, "bpe_merge_not_pair.json", json.dumps({"type": "bpe", "merges": [[104, 101, 3]]}))
put(T, "bpe_vocab_size_lies.json", json.dumps({"type": "bpe", "vocab_size": 300, "merges": [[104, 101]]}))
put(T, "bpe_bad_pre_split.json", json.dumps({"type": "bpe", "pre_split": "bert", "merges": []}))
put(T, "type_with_newline.json", json.dumps({"type": "char\nbpe"}))  # found by fuzz_tokenizer
