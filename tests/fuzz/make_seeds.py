#!/usr/bin/env python3
"""make_seeds.py: writes the committed seed corpora in tests/fuzz/corpus/<target>/.

Small valid files and near-valid ones (one thing wrong), so the fuzzers start from the
formats' real structure. Pure standard library; rerun after changing a format:
    python3 tests/fuzz/make_seeds.py
"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- config: the JSON file, then NUL-separated --set overrides ----
small = {"model": {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 16},
         "train": {"steps": 20, "batch_size": 2, "eval_interval": 10}, "schedule": {"warmup_steps": 2}}
put("config", "empty_object", "{}")
put("config", "small", json.dumps(small))
put("config", "small_overrides", json.dumps(small) + "\0optim.lr=3e-4\0model.dropout=0.1\0precision.dtype=\"bf16\"")
put("config", "seq2seq", json.dumps({"description": "reverse", "model": {"type": "transformer", "n_layer": 2},
                                     "data": {"dataset": "reverse", "task_max_len": 6},
                                     "optim": {"name": "sgd", "momentum": 0.9, "nesterov": True},
                                     "schedule": {"name": "noam", "warmup_steps": 50}}))
put("config", "shorthand_fp16", json.dumps({"precision": "fp16", "optim": {"lr": 1e-3}, "schedule": {"name": "linear"}}))
put("config", "text_data", json.dumps({"data": {"dataset": "text", "path": "README.md", "tokenizer": "bpe",
                                                "bpe_vocab_size": 300}}))
put("config", "all_sections", json.dumps({
    "model": {"type": "gpt", "n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 32, "d_ff": 128,
              "dropout": 0.0, "bias": False, "activation": "gelu_tanh", "pos_encoding": "rope",
              "norm": "post", "tie_weights": False, "init": "xavier", "window": 8},
    "data": {"dataset": "synthetic", "val_fraction": 0.2, "block_size": 16, "corpus_tokens": 5000},
    "optim": {"name": "adam", "lr": 0.01, "beta1": 0.8, "beta2": 0.95, "eps": 1e-6, "weight_decay": 0.0,
              "decay": "all", "grad_clip": 0.5, "clip_value": 2.0},
    "schedule": {"name": "cosine", "warmup_steps": 10, "min_lr": 1e-5, "decay_steps": 100},
    "train": {"steps": 100, "batch_size": 4, "eval_interval": 50, "eval_iters": 2, "eval_full": True,
              "log_interval": 5, "seed": 1, "threads": 1, "label_smoothing": 0.1, "samples": 0,
              "sample_tokens": 10, "max_loss": 100.0},
    "precision": {"dtype": "fp16", "loss_scaling": True, "init_scale": 1024.0, "growth_factor": 2.0,
                  "backoff_factor": 0.5, "growth_interval": 100},
    "output": {"run_dir": "runs/x", "checkpoint_interval": 10, "save_best": False, "overwrite": True,
               "plot": False}}))
put("config", "near_unknown_key", '{"optim": {"lr": 1e-3, "lerning_rate": 2}}')
put("config", "near_wrong_type", '{"model": {"n_layer": "4"}}')
put("config", "near_bad_json", '{"model": {"n_layer": 4,}}')
put("config", "near_huge", '{"model": {"n_layer": 100000, "n_embd": 1000000, "n_head": 1}}')
put("config", "near_bad_override", "{}\0optim=3\0.x=1\0optim.lr=nan")


# ---- safetensors ----
def safetensors(tensors, metadata=None, pad=True):
    """tensors: list of (name, dtype, shape, raw bytes), laid out in order."""
    header, data, pos = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + len(raw)]}
        data += raw
        pos += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
f64 = lambda *v: struct.pack("<%dd" % len(v), *v)
put("safetensors", "empty", safetensors([]))
put("safetensors", "one_f32", safetensors([("w", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6))]))
put("safetensors", "mixed", safetensors([("a", "F64", [2], f64(0.5, -1)), ("b.weight", "F32", [1, 2], f32(3, 4)),
                                         ("s", "F32", [], f32(7))], metadata={"format": "pt", "step": "10"}))
put("safetensors", "halfs", safetensors([("h", "F16", [4], struct.pack("<4H", 0x3c00, 0x7bff, 0x0001, 0xfc00)),
                                         ("b", "BF16", [2], struct.pack("<2H", 0x3f80, 0x7fc0))]))
put("safetensors", "zero_size", safetensors([("z", "F32", [0, 5], b""), ("x", "F32", [1], f32(1))]))
put("safetensors", "int_dtype", safetensors([("i", "I64", [2], struct.pack("<2q", 1, -1))]))
put("safetensors", "unpadded", safetensors([("w", "F32", [1], f32(1))], pad=False))
good = safetensors([("w", "F32", [2, 2], f32(1, 2, 3, 4))])
put("safetensors", "near_truncated", good[:-3])
put("safetensors", "near_huge_length", struct.pack("<Q", 1 << 40) + good[8:])
put("safetensors", "near_lying_offsets", good.replace(b"[0,16]", b"[0,99]"))


# ---- tokenizer: the tokenizer.json file, then optionally NUL and a text to encode ----
put("tokenizer", "char", json.dumps({"type": "char", "chars": "\n !,.?abcdefghijklmnopqrstuvwxyz", "unk": False}) + "\0hello, world.")
put("tokenizer", "char_unk", json.dumps({"type": "char", "chars": "abc我喜欢", "unk": True}, ensure_ascii=False) + "\0我喜欢苹果 abc")
put("tokenizer", "bpe", json.dumps({"type": "bpe", "pre_split": "gpt2", "vocab_size": 260,
                                    "merges": [[104, 101], [108, 108], [256, 257], [32, 119]]}) + "\0hello hello world")
put("tokenizer", "bpe_none", json.dumps({"type": "bpe", "pre_split": "none", "merges": [[0, 255], [256, 256]]}) + "\0\x00\xff\x00\xff")
put("tokenizer", "near_bad_merge", json.dumps({"type": "bpe", "merges": [[1, 300]]}))
put("tokenizer", "near_dup_char", json.dumps({"type": "char", "chars": "aba"}))
put("tokenizer", "near_unknown_type", json.dumps({"type": "wordpiece"}))


# ---- text: a training text file ----
put("text", "ascii", "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n")
put("text", "unicode", "我喜欢苹果. Ünïcödé ✓ 🙂 \u00e9\u0301 \U0010ffff end\n")
put("text", "near_invalid_utf8", b"valid start \xc3\x28 then \xed\xa0\x80 surrogate \xf4\x90\x80\x80 too big")
put("text", "near_binary", b"text\x00with a NUL")
put("text", "near_overlong", b"\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf")
put("text", "one_long_line", "ab " * 300)


# ---- token_cache: one control byte (odd: the harness fixes the fingerprint and digest), then
# the cache file. The text and tokenizer are the harness's own.
text = "to be, or not to be: that is the question.\n"
vocab = sorted(set(text))
ids = [vocab.index(ch) for ch in text]


def cache(ids, n=None, version=1, idsize=4, magic=b"SFTOKENS"):
    head = magic + struct.pack("<II", version, idsize) + b"0" * 16 + b"\0" * 16
    head += struct.pack("<QQ", len(ids) if n is None else n, 0)
    return head + struct.pack("<%di" % len(ids), *ids)


put("token_cache", "valid", b"\x01" + cache(ids))
put("token_cache", "valid_unfixed", b"\x00" + cache(ids))
put("token_cache", "near_count_lies", b"\x01" + cache(ids, n=1 << 62))
put("token_cache", "near_id_range", b"\x01" + cache(ids[:-1] + [len(vocab)]))
put("token_cache", "near_version", b"\x01" + cache(ids, version=2))
put("token_cache", "near_truncated", b"\x01" + cache(ids)[:70])
