#!/usr/bin/python3
"""Converts nanoGPT checkpoints to scratchformer weights and back.

    # nanoGPT ckpt.pt -> model.safetensors + config.json (scratchformer's GPTConfig fields)
    /usr/bin/python3 tools/nanogpt_convert.py to-safetensors out/ckpt.pt converted/

    # model.safetensors + config.json -> ckpt.pt that nanoGPT's model.py / sample.py loads
    /usr/bin/python3 tools/nanogpt_convert.py to-nanogpt converted/model.safetensors \
        converted/config.json ckpt.pt

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

Requires torch (Debian's python3-torch) and numpy. A ckpt.pt is a pickle: convert only files you
trust (the safetensors side is plain data and safe to read from anywhere).
"""
import argparse
import json
import os
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


def to_safetensors(ckpt_path, out_dir):
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
    config = gpt_config(args, tied)
    os.makedirs(out_dir, exist_ok=True)
    safetensors_io.save_file(state, os.path.join(out_dir, "model.safetensors"),
                             metadata={"format": "pt", "source": "nanoGPT",
                                       "config": json.dumps(config, sort_keys=True)})
    text = json.dumps(config, indent=2) + "\n"
    safetensors_io.write_atomic(os.path.join(out_dir, "config.json"), text.encode())
    return config


def to_nanogpt(weights_path, config_path, ckpt_path, attn_bias_buffer="auto"):
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
    ckpt = {"model": state, "model_args": args, "iter_num": 0, "best_val_loss": float("inf"),
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
    a = sub.add_parser("to-safetensors", help="nanoGPT ckpt.pt -> OUT_DIR/model.safetensors + config.json")
    a.add_argument("ckpt")
    a.add_argument("out_dir")
    b = sub.add_parser("to-nanogpt", help="model.safetensors + config.json -> nanoGPT ckpt.pt")
    b.add_argument("weights")
    b.add_argument("config")
    b.add_argument("ckpt")
    b.add_argument("--attn-bias-buffer", choices=("auto", "yes", "no"), default="auto",
                   help="write the causal-mask buffers nanoGPT registers on torch < 2.0")
    args = p.parse_args(argv)
    try:
        if args.command == "to-safetensors":
            c = to_safetensors(args.ckpt, args.out_dir)
            print(f"wrote {args.out_dir}/model.safetensors and config.json "
                  f"({c['n_layer']} layers, n_embd {c['n_embd']}, vocab {c['vocab_size']})")
        else:
            to_nanogpt(args.weights, args.config, args.ckpt, args.attn_bias_buffer)
            print(f"wrote {args.ckpt}")
    except (ConvertError, OSError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
