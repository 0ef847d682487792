#!/usr/bin/python3
"""Converts nanoGPT checkpoints to scratchformer runs and weights, and back.

    # nanoGPT ckpt.pt + its meta.pkl -> a run directory `scratchformer eval/sample` accept
    /usr/bin/python3 tools/nanogpt_convert.py to-run out/ckpt.pt runs/nanogpt \
        --meta data/shakespeare_char/meta.pkl            # [--text FILE for another corpus]
    build/scratchformer eval runs/nanogpt
    build/scratchformer sample runs/nanogpt --prompt "ROMEO:"

    # a scratchformer run (or checkpoint record) -> ckpt.pt (+ meta.pkl) for nanoGPT
    /usr/bin/python3 tools/nanogpt_convert.py to-nanogpt runs/default ckpt.pt --meta meta.pkl

    # lower level, for C++ code that builds an sf::GPT itself: model.safetensors + a JSON of
    # nn/gpt.h's GPTConfig fields (vocab_size, tied_head, ...), and back
    /usr/bin/python3 tools/nanogpt_convert.py to-safetensors out/ckpt.pt converted/
    /usr/bin/python3 tools/nanogpt_convert.py to-nanogpt converted/model.safetensors \
        converted/config.json ckpt.pt

A run directory holds the experiment config (config.json, the field names of
train/config.h and configs/README.md: model.tie_weights, ...; the vocabulary size comes
from tokenizer.json) and a weights-only checkpoint (checkpoints/last.json, with the size and
sha256 of its weights file). It can be evaluated and sampled, not resumed: a nanoGPT ckpt.pt
converted this way carries no scratchformer optimizer state. Only character-level models
convert to runs: their meta.pkl ('itos') becomes our char tokenizer, which orders characters by
code point as nanoGPT's prepare.py does.

A nanoGPT ckpt.pt is a dict whose 'model' is the GPT's state_dict (keys prefixed '_orig_mod.'
when the model was torch.compile'd) and whose 'model_args' holds n_layer, n_head, n_embd,
block_size, bias, vocab_size and dropout. Our GPT uses nanoGPT's parameter names and shapes, so
the conversion only strips the prefix, drops the causal-mask buffers ('.attn.bias', present when
torch has no scaled_dot_product_attention), widens half-precision tensors to float32, saves
lm_head.weight once when it is tied to transformer.wte.weight, and checks every name and shape.

The reverse writes {'model', 'model_args', 'iter_num', 'best_val_loss', 'config'} like nanoGPT's
train.py (without optimizer state: sample.py and init_from='resume' evaluation load it; to keep
training, start nanoGPT from these weights with a fresh optimizer). The mask buffers are written
when the running torch lacks scaled_dot_product_attention, so nanoGPT's strict load_state_dict
accepts the file under this torch; --attn-bias-buffer yes/no forces the choice.

Requires torch (Debian's python3-torch) and numpy. A ckpt.pt (and a meta.pkl) is a pickle:
convert only files you trust (the safetensors side is plain data and safe to read from anywhere).
"""
import argparse
import hashlib
import json
import os
import pickle
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

MODEL_ARGS = ("n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size", "dropout")


class ConvertError(Exception):
    pass


def expected_shapes(a):
    """Every parameter of nanoGPT's GPT for model_args `a`, name -> shape (lm_head listed)."""
    C, V, L, bias = a["n_embd"], a["vocab_size"], a["n_layer"], a["bias"]
    shapes = {"transformer.wte.weight": (V, C), "transformer.wpe.weight": (a["block_size"], C)}
    for i in range(L):
        p = f"transformer.h.{i}."
        layer = {"ln_1.weight": (C,), "attn.c_attn.weight": (3 * C, C), "attn.c_proj.weight": (C, C),
                 "ln_2.weight": (C,), "mlp.c_fc.weight": (4 * C, C), "mlp.c_proj.weight": (C, 4 * C)}
        if bias:
            layer.update({"ln_1.bias": (C,), "attn.c_attn.bias": (3 * C,), "attn.c_proj.bias": (C,),
                          "ln_2.bias": (C,), "mlp.c_fc.bias": (4 * C,), "mlp.c_proj.bias": (C,)})
        shapes.update({p + k: v for k, v in layer.items()})
    shapes["transformer.ln_f.weight"] = (C,)
    if bias:
        shapes["transformer.ln_f.bias"] = (C,)
    shapes["lm_head.weight"] = (V, C)
    return shapes


def gpt_config(a, tied):
    """The JSON model config for our GPT (field names of nn/gpt.h's GPTConfig)."""
    return {"vocab_size": a["vocab_size"], "block_size": a["block_size"], "n_layer": a["n_layer"],
            "n_head": a["n_head"], "n_embd": a["n_embd"], "d_ff": 4 * a["n_embd"],
            "dropout": a["dropout"], "bias": bool(a["bias"]), "tied_head": tied,
            "pos_encoding": "learned", "norm": "pre", "activation": "gelu", "ln_eps": 1e-5}


def load_nanogpt(ckpt_path):
    """Reads and checks a nanoGPT ckpt.pt: (float32 state without tied lm_head, model_args, tied, ckpt)."""
    # torch.load unpickles, which can run code from the file: convert only checkpoints you trust
    # (torch 1.13's weights_only=True cannot read nanoGPT's checkpoints: it rejects floats).
    ckpt = torch.load(ckpt_path, map_location="cpu")
    if not isinstance(ckpt, dict) or "model" not in ckpt or "model_args" not in ckpt:
        raise ConvertError(f"{ckpt_path}: not a nanoGPT checkpoint (needs 'model' and 'model_args')")
    args = dict(ckpt["model_args"])
    missing = [k for k in MODEL_ARGS if k not in args]
    if missing:
        raise ConvertError(f"{ckpt_path}: model_args lacks {', '.join(missing)}")
    state = {}
    for name, t in ckpt["model"].items():
        if name.startswith("_orig_mod."):  # saved from a torch.compile'd model
            name = name[len("_orig_mod."):]
        if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias"):
            continue  # causal-mask buffers, not parameters
        state[name] = t.detach().to(torch.float32).contiguous()  # fp16/bf16 widen exactly

    shapes = expected_shapes(args)
    for name, shape in shapes.items():
        if name not in state:
            raise ConvertError(f"{ckpt_path}: missing tensor '{name}'")
        if tuple(state[name].shape) != shape:
            raise ConvertError(f"{ckpt_path}: tensor '{name}' has shape {tuple(state[name].shape)}, "
                               f"expected {shape} from model_args")
    extra = sorted(set(state) - set(shapes))
    if extra:
        raise ConvertError(f"{ckpt_path}: unexpected tensor '{extra[0]}'")

    tied = torch.equal(state["lm_head.weight"], state["transformer.wte.weight"])
    if tied:
        del state["lm_head.weight"]  # one copy; our GPT ties it back to transformer.wte.weight
    return state, args, tied, ckpt


def to_safetensors(ckpt_path, out_dir):
    state, args, tied, _ = load_nanogpt(ckpt_path)
    config = gpt_config(args, tied)
    os.makedirs(out_dir, exist_ok=True)
    safetensors_io.save_file(state, os.path.join(out_dir, "model.safetensors"),
                             metadata={"format": "pt", "source": "nanoGPT",
                                       "config": json.dumps(config, sort_keys=True)})
    text = json.dumps(config, indent=2) + "\n"
    safetensors_io.write_atomic(os.path.join(out_dir, "config.json"), text.encode())
    return config


# ---- scratchformer run directories ----

def char_tokenizer(meta_path, vocab_size):
    """nanoGPT's meta.pkl ({'itos': {id: char}, ...}) as our char tokenizer's JSON."""
    with open(meta_path, "rb") as f:
        try:
            meta = pickle.load(f)  # a pickle, like ckpt.pt: only files you trust
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as e:
            raise ConvertError(f"{meta_path}: not a nanoGPT meta.pkl ({e})")
    itos = meta.get("itos") if isinstance(meta, dict) else None
    if not isinstance(itos, dict) or sorted(itos) != list(range(len(itos))):
        raise ConvertError(f"{meta_path}: no 'itos' table of ids 0..n-1 (only character-level meta.pkl files convert)")
    chars = [itos[i] for i in range(len(itos))]
    if not all(isinstance(ch, str) and len(ch) == 1 for ch in chars):
        raise ConvertError(f"{meta_path}: 'itos' maps ids to strings longer than one character "
                           "(only character-level models convert to runs)")
    if len(chars) != vocab_size:
        raise ConvertError(f"{meta_path}: {len(chars)} characters, but the model's vocab_size is {vocab_size}")
    return {"type": "char", "chars": "".join(chars), "unk": False}


def run_config(args, tied, run_dir, text_path, description):
    """The experiment config of a converted run (train/config.h names; defaults elsewhere)."""
    model = {"type": "gpt", "n_layer": args["n_layer"], "n_head": args["n_head"], "n_embd": args["n_embd"],
             "block_size": args["block_size"], "n_decoder_layer": 0, "d_ff": 4 * args["n_embd"],
             "dropout": float(args["dropout"]), "bias": bool(args["bias"]), "activation": "gelu",
             "pos_encoding": "learned", "norm": "pre", "tie_weights": tied, "init": "gpt2", "window": 0}
    if text_path:  # nanoGPT's prepare.py holds out the last 10% of the text, as data.val_fraction 0.1 does
        data = {"dataset": "text", "path": os.path.abspath(text_path), "tokenizer": "char", "val_fraction": 0.1}
    else:
        data = {"dataset": "shakespeare", "tokenizer": "char", "val_fraction": 0.1}
    return {"description": description, "model": model, "data": data, "output": {"run_dir": run_dir}}


def file_entry(path):
    with open(path, "rb") as f:
        data = f.read()
    return {"path": os.path.basename(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def to_run(ckpt_path, run_dir, meta_path, text_path=None):
    """nanoGPT ckpt.pt -> a run directory with a weights-only checkpoint `last` (see the top)."""
    if os.path.exists(os.path.join(run_dir, "config.json")) or os.path.exists(os.path.join(run_dir, "checkpoints")):
        raise ConvertError(f"{run_dir}: already holds a run; pick another directory")
    state, args, tied, ckpt = load_nanogpt(ckpt_path)
    tokenizer = char_tokenizer(meta_path, args["vocab_size"])
    step = int(ckpt.get("iter_num", 0))
    config = run_config(args, tied, run_dir, text_path,
                        f"nanoGPT checkpoint {os.path.abspath(ckpt_path)} (iter {step}), converted")
    ckpt_dir = os.path.join(run_dir, "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    weights = os.path.join(ckpt_dir, f"last-{step:06d}.weights.safetensors")
    safetensors_io.save_file(state, weights, metadata={"format": "scratchformer", "step": str(step)})
    optim = os.path.join(ckpt_dir, f"last-{step:06d}.optim.safetensors")
    safetensors_io.save_file({}, optim)  # no optimizer state: "weights_only" below
    # The record is written last (the commit point), as train/checkpoint.cpp does.
    best = float(ckpt.get("best_val_loss", float("inf")))
    record = {"format": 1, "name": "last", "step": step, "weights_only": True,
              "files": {"weights": file_entry(weights), "optimizer": file_entry(optim)},
              "optimizer": {}, "precision": {}, "data": {},
              "loop": {"best_val_loss": best} if best < float("inf") else {},
              "config": config, "tokenizer": tokenizer}
    safetensors_io.write_atomic(os.path.join(run_dir, "config.json"), (json.dumps(config, indent=2) + "\n").encode())
    safetensors_io.write_atomic(os.path.join(run_dir, "tokenizer.json"), (json.dumps(tokenizer) + "\n").encode())
    safetensors_io.write_atomic(os.path.join(ckpt_dir, "last.json"), json.dumps(record, indent=1).encode())
    return config


def run_checkpoint(run_or_record):
    """(record path, record) of a run directory (best, else last) or of a checkpoint record file."""
    path = run_or_record
    if os.path.isdir(path):
        for name in ("best", "last"):
            path = os.path.join(run_or_record, "checkpoints", name + ".json")
            if os.path.isfile(path):
                break
        else:
            raise ConvertError(f"{run_or_record}: no checkpoint in this run (expected checkpoints/best.json or last.json)")
    with open(path) as f:
        record = json.load(f)
    return path, record


def gpt_config_of_run(record, record_path, vocab_size):
    """A run's model section as GPTConfig fields, for the checks and model_args of to_nanogpt."""
    m = record["config"]["model"]
    if m.get("type", "gpt") != "gpt":
        raise ConvertError(f"{record_path}: model.type '{m['type']}' has no nanoGPT equivalent (needs 'gpt')")
    if m.get("window", 0) != 0:
        raise ConvertError(f"{record_path}: model.window {m['window']} has no nanoGPT equivalent (needs 0)")
    n_embd = m.get("n_embd", 128)
    return {"vocab_size": vocab_size, "block_size": m.get("block_size", 64), "n_layer": m.get("n_layer", 4),
            "n_head": m.get("n_head", 4), "n_embd": n_embd, "d_ff": m.get("d_ff", 0) or 4 * n_embd,
            "dropout": m.get("dropout", 0.0), "bias": m.get("bias", True), "tied_head": m.get("tie_weights", True),
            "pos_encoding": m.get("pos_encoding", "learned"), "norm": m.get("norm", "pre"),
            "activation": m.get("activation", "gelu"), "ln_eps": 1e-5}


def write_meta(tokenizer, meta_path, where):
    """Our char tokenizer as nanoGPT's meta.pkl (vocab_size, itos, stoi)."""
    if tokenizer.get("type") != "char" or tokenizer.get("unk"):
        raise ConvertError(f"{where}: --meta needs a char tokenizer without <unk>")
    itos = dict(enumerate(tokenizer["chars"]))
    data = pickle.dumps({"vocab_size": len(itos), "itos": itos, "stoi": {ch: i for i, ch in itos.items()}})
    safetensors_io.write_atomic(meta_path, data)


def to_nanogpt_from_run(run_or_record, ckpt_path, meta_path=None, attn_bias_buffer="auto"):
    record_path, record = run_checkpoint(run_or_record)
    weights = os.path.join(os.path.dirname(record_path), record["files"]["weights"]["path"])
    tensors, _ = safetensors_io.load_file(weights)
    wte = tensors.get("transformer.wte.weight", tensors.get("lm_head.weight"))
    if wte is None:
        raise ConvertError(f"{weights}: missing tensor 'transformer.wte.weight'")
    config = gpt_config_of_run(record, record_path, int(wte.shape[0]))
    args = to_nanogpt(weights, config, ckpt_path, attn_bias_buffer, where=record_path, iter_num=int(record["step"]))
    if meta_path:
        write_meta(record["tokenizer"], meta_path, record_path)
    return args


def to_nanogpt(weights_path, config, ckpt_path, attn_bias_buffer="auto", where=None, iter_num=0):
    """model.safetensors + GPTConfig JSON (a path, or the dict itself) -> nanoGPT ckpt.pt."""
    if isinstance(config, dict):
        c, config_path = config, where or weights_path
    else:
        config_path = config
        with open(config_path) as f:
            c = json.load(f)
    for key, want in (("pos_encoding", "learned"), ("norm", "pre"), ("activation", "gelu")):
        if c.get(key, want) != want:
            raise ConvertError(f"{config_path}: {key} '{c[key]}' has no nanoGPT equivalent (needs '{want}')")
    if c.get("d_ff", 0) not in (0, 4 * c["n_embd"]):
        raise ConvertError(f"{config_path}: d_ff {c['d_ff']} has no nanoGPT equivalent (needs 4 * n_embd)")
    if abs(c.get("ln_eps", 1e-5) - 1e-5) > 1e-12:
        raise ConvertError(f"{config_path}: ln_eps {c['ln_eps']} has no nanoGPT equivalent (1e-5)")
    args = {k: c[k] for k in MODEL_ARGS}

    tensors, _ = safetensors_io.load_file(weights_path)
    tensors = {k: v.to(torch.float32) for k, v in tensors.items()}
    if "lm_head.weight" in tensors and "transformer.wte.weight" in tensors:
        if not torch.equal(tensors["lm_head.weight"], tensors["transformer.wte.weight"]):
            raise ConvertError(f"{weights_path}: lm_head.weight differs from transformer.wte.weight, "
                               "but nanoGPT always ties them")
    shared = tensors.get("transformer.wte.weight", tensors.get("lm_head.weight"))
    if shared is None:
        raise ConvertError(f"{weights_path}: missing tensor 'transformer.wte.weight'")
    tensors["transformer.wte.weight"] = tensors["lm_head.weight"] = shared  # one tensor, two names
    shapes = expected_shapes(args)
    for name, shape in shapes.items():
        if name not in tensors:
            raise ConvertError(f"{weights_path}: missing tensor '{name}'")
        if tuple(tensors[name].shape) != shape:
            raise ConvertError(f"{weights_path}: tensor '{name}' has shape {tuple(tensors[name].shape)}, "
                               f"expected {shape}")
    extra = sorted(set(tensors) - set(shapes))
    if extra:
        raise ConvertError(f"{weights_path}: unexpected tensor '{extra[0]}'")

    # nanoGPT's state_dict order: as the modules are registered
    state = {}
    buffers = (attn_bias_buffer == "yes" or (attn_bias_buffer == "auto" and
               not hasattr(torch.nn.functional, "scaled_dot_product_attention")))
    bs = args["block_size"]
    for name in shapes:
        if buffers and name.endswith("attn.c_attn.weight"):  # the buffer precedes the children
            state[name.replace("c_attn.weight", "bias")] = torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs)
        state[name] = tensors[name]
    ckpt = {"model": state, "model_args": args, "iter_num": iter_num, "best_val_loss": float("inf"),
            "config": {"source": "scratchformer"}}
    tmp = f"{ckpt_path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(ckpt, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, ckpt_path)
    return args


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("to-run", help="nanoGPT ckpt.pt + meta.pkl -> a scratchformer run directory (eval, sample)")
    r.add_argument("ckpt")
    r.add_argument("run_dir")
    r.add_argument("--meta", required=True, help="the model's meta.pkl (nanoGPT's data/<name>/meta.pkl)")
    r.add_argument("--text", help="the text it was trained on, when not Tiny Shakespeare (data.dataset 'text')")
    a = sub.add_parser("to-safetensors", help="nanoGPT ckpt.pt -> OUT_DIR/model.safetensors + GPTConfig JSON")
    a.add_argument("ckpt")
    a.add_argument("out_dir")
    b = sub.add_parser("to-nanogpt", help="RUN_DIR (or record) ckpt.pt, or model.safetensors config.json ckpt.pt")
    b.add_argument("paths", nargs="+", metavar="PATH")
    b.add_argument("--meta", help="also write the run's char vocabulary as nanoGPT's meta.pkl here")
    b.add_argument("--attn-bias-buffer", choices=("auto", "yes", "no"), default="auto",
                   help="write the causal-mask buffers nanoGPT registers on torch < 2.0")
    args = p.parse_args(argv)
    try:
        if args.command == "to-run":
            c = to_run(args.ckpt, args.run_dir, args.meta, args.text)
            print(f"wrote run {args.run_dir} ({c['model']['n_layer']} layers, n_embd {c['model']['n_embd']}); "
                  f"try: scratchformer eval {args.run_dir}")
        elif args.command == "to-safetensors":
            c = to_safetensors(args.ckpt, args.out_dir)
            print(f"wrote {args.out_dir}/model.safetensors and config.json "
                  f"({c['n_layer']} layers, n_embd {c['n_embd']}, vocab {c['vocab_size']})")
        elif len(args.paths) == 2:
            to_nanogpt_from_run(args.paths[0], args.paths[1], args.meta, args.attn_bias_buffer)
            print(f"wrote {args.paths[1]}" + (f" and {args.meta}" if args.meta else ""))
        elif len(args.paths) == 3 and not args.meta:
            to_nanogpt(*args.paths, attn_bias_buffer=args.attn_bias_buffer)
            print(f"wrote {args.paths[2]}")
        else:
            p.error("to-nanogpt takes RUN_DIR CKPT [--meta META], or WEIGHTS CONFIG CKPT")
    except (ConvertError, OSError, KeyError, ValueError, pickle.UnpicklingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
