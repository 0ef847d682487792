#!/usr/bin/env python3
"""make_bad_checkpoints.py: trains a tiny run with the real CLI, then writes from its checkpoint

  tests/bad_inputs/checkpoint/<case>/   the intact checkpoint ("good") and copies with one thing
                                        broken (cases.txt says which error `eval` must give)
  tests/fuzz/corpus/checkpoint/         seeds for fuzz_checkpoint (its input layout: a control
                                        byte, record, weights, optimizer file, separated by
                                        "\\n--sf-part--\\n")

The model is fuzz_checkpoint.cpp's (kConfig): the seeds must fit it. Rerun after changing the
checkpoint format:   python3 tests/bad_inputs/make_bad_checkpoints.py build/scratchformer
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIG = {"model": {"n_layer": 1, "n_head": 1, "n_embd": 4, "block_size": 4},
          "data": {"dataset": "synthetic", "corpus_tokens": 300, "corpus_val_tokens": 100},
          "train": {"batch_size": 2, "steps": 2, "eval_interval": 2, "eval_iters": 1, "samples": 0},
          "schedule": {"warmup_steps": 0}, "precision": {"dtype": "fp16"},
          "output": {"save_best": False, "plot": False}}
SEP = b"\n--sf-part--\n"


def train(cli, tmp):
    cfg = os.path.join(tmp, "tiny.json")
    with open(cfg, "w") as f:
        json.dump(CONFIG, f)
    run = os.path.join(tmp, "run")
    subprocess.run([cli, "train", cfg, "--set", "output.run_dir=" + run], check=True, stdout=subprocess.DEVNULL)
    ckpt = os.path.join(run, "checkpoints")
    with open(os.path.join(ckpt, "last.json"), "rb") as f:
        record = json.loads(f.read())
    files = {part: open(os.path.join(ckpt, record["files"][part]["path"]), "rb").read()
             for part in ("weights", "optimizer")}
    return record, files


def sha256(b):
    import hashlib
    return hashlib.sha256(b).hexdigest()


def write_case(name, record_text, files, names):
    """A checkpoint folder: last.json (record_text, bytes) and the tensor files under `names`."""
    d = os.path.join(HERE, "checkpoint", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "last.json"), "wb") as f:
        f.write(record_text)
    for part, data in files.items():
        if data is not None:
            with open(os.path.join(d, names[part]), "wb") as f:
                f.write(data)


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "scratchformer")
    with tempfile.TemporaryDirectory() as tmp:
        record, files = train(cli, tmp)
    names = {p: record["files"][p]["path"] for p in files}
    dump = lambda r: json.dumps(r, indent=1).encode()

    def with_files(r, fs):  # the record with true sizes and hashes for these file contents
        r = json.loads(json.dumps(r))
        for p, data in fs.items():
            r["files"][p]["bytes"], r["files"][p]["sha256"] = len(data), sha256(data)
        return r

    good = dump(record)
    write_case("good", good, files, names)
    w = files["weights"]
    write_case("truncated_weights", good, {**files, "weights": w[: len(w) // 2]}, names)
    flipped = bytearray(w)
    flipped[-7] ^= 0x10  # one bit of a parameter's float
    write_case("bitflip_weights", good, {**files, "weights": bytes(flipped)}, names)
    write_case("missing_optimizer", good, {**files, "optimizer": None}, names)
    write_case("truncated_record", good[: len(good) // 2], files, names)
    sha = record["files"]["weights"]["sha256"]
    flipped_sha = sha[:10] + chr(ord(sha[10]) ^ 0x01) + sha[11:]  # one bit of the recorded hash
    write_case("bitflip_record", good.replace(sha.encode(), flipped_sha.encode()), files, names)
    # A weights file whose header length field has one bit flipped, with a record that agrees
    # with it (as if both were rewritten): the safetensors reader must still refuse it.
    bad_header = bytearray(w)
    bad_header[3] ^= 0x01  # length += 2^24
    write_case("bitflip_header_consistent", dump(with_files(record, {"weights": bytes(bad_header)})),
               {**files, "weights": bytes(bad_header)}, names)
    r = json.loads(good)
    r["files"]["weights"]["path"] = "../../../config/empty.json"
    write_case("path_escapes_folder", dump(r), files, names)
    r = json.loads(good)
    del r["loop"]
    write_case("missing_loop", dump(r), files, names)
    r = json.loads(good)
    r["step"] = -5
    write_case("negative_step", dump(r), files, names)

    # Fuzz seeds: control byte 1 (the harness fixes sizes and hashes) and 0 (as given).
    seeds = os.path.join(ROOT, "tests", "fuzz", "corpus", "checkpoint")
    os.makedirs(seeds, exist_ok=True)
    r = json.loads(good)
    for p in files:
        r["files"][p]["path"] = {"weights": "w.safetensors", "optimizer": "o.safetensors"}[p]
    body = dump(r) + SEP + files["weights"] + SEP + files["optimizer"]
    for name, data in {"valid": b"\x01" + body, "valid_unfixed": b"\x00" + body,
                       "near_truncated": b"\x01" + body[: len(body) * 2 // 3],
                       "near_record_only": b"\x01" + dump(r)}.items():
        with open(os.path.join(seeds, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
