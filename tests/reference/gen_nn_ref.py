#!/usr/bin/python3
"""Writes the PyTorch reference data for the nn parity tests (tests/nn/test_parity*.cpp).

Run from the project root with Debian's python3-torch (1.13):

    /usr/bin/python3 tests/reference/gen_nn_ref.py

Every case is one small safetensors file in tests/reference/nn/ (float32, exact bits), read by
the C++ tests with our own loader, so the tests never need torch:

    input.<name>         the inputs that take gradients (x, memory)
    mask.<name>          0/1 masks (key_padding (B, S): 1 = padding key)
    param.<our name>     the torch module's weights under OUR parameter names (mapping below)
    out_weight           fixed random W of the output's shape; the loss is sum(output * W)
    output               the torch module's output
    grad.input.<name>    d loss / d input
    grad.param.<name>    d loss / d parameter, under our names
    attn_weights         (MultiheadAttention only) per-head attention weights (B, H, T, S)
    __metadata__.config  the layer's settings as JSON

Name mapping from torch modules to ours:
    MultiheadAttention in_proj_weight (3C, C) = [Wq; Wk; Wv]  -> self: c_attn.weight (3C, C)
                                                                cross: c_q.weight = rows [0, C),
                                                                       c_kv.weight = rows [C, 3C)
                       in_proj_bias (likewise), out_proj     -> c_attn/c_q/c_kv .bias, c_proj
    TransformerEncoderLayer self_attn, linear1, linear2, norm1, norm2
                                      -> attn, mlp.c_fc, mlp.c_proj, ln_1, ln_2
    TransformerDecoderLayer self_attn, multihead_attn, linear1, linear2, norm1, norm2, norm3
                                      -> attn, cross_attn, mlp.c_fc, mlp.c_proj, ln_1, ln_2, ln_3

The GPT cases build tests/reference/nanogpt_model.py (nanoGPT's layout), save a nanoGPT-style
ckpt.pt (one with torch.compile's '_orig_mod.' prefix), convert it with
tools/nanogpt_convert.py into tests/reference/nn/nanogpt_<case>/{model.safetensors, config.json},
check that converting back gives a checkpoint nanoGPT's layout loads strictly with identical
logits, and store the torch logits, loss and gradients of every parameter.
"""
import json
import math
import os
import sys
import tempfile

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(HERE, "nn")
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)
import nanogpt_convert  # noqa: E402
import nanogpt_model  # noqa: E402
import safetensors_io  # noqa: E402

B, T, S, C, H, F = 2, 5, 6, 16, 4, 32  # batch, target length, memory length, channels, heads, FFN


def randomize(module, scale=0.3):
    """Non-trivial weights everywhere (torch's default init leaves biases at zero)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name or "ln" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.2 * torch.randn_like(p))
            else:
                p.copy_(scale * torch.randn_like(p))


def causal_mask(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = not allowed


def padding(lengths, n):
    """(B, n) bool, True at positions >= length (padding at the end, so no row is fully masked)."""
    return torch.arange(n)[None, :] >= torch.tensor(lengths)[:, None]


def mha_params(mha, cross, prefix=""):
    w, b = mha.in_proj_weight, mha.in_proj_bias
    out = {}
    if cross:
        out[prefix + "c_q.weight"], out[prefix + "c_kv.weight"] = w[:C], w[C:]
        if b is not None:
            out[prefix + "c_q.bias"], out[prefix + "c_kv.bias"] = b[:C], b[C:]
    else:
        out[prefix + "c_attn.weight"] = w
        if b is not None:
            out[prefix + "c_attn.bias"] = b
    out[prefix + "c_proj.weight"] = mha.out_proj.weight
    if mha.out_proj.bias is not None:
        out[prefix + "c_proj.bias"] = mha.out_proj.bias
    return out


def mha_grads(mha, cross, prefix=""):
    g = lambda t: None if t is None else t.grad
    w, b = mha.in_proj_weight.grad, g(mha.in_proj_bias)
    out = {}
    if cross:
        out[prefix + "c_q.weight"], out[prefix + "c_kv.weight"] = w[:C], w[C:]
        if b is not None:
            out[prefix + "c_q.bias"], out[prefix + "c_kv.bias"] = b[:C], b[C:]
    else:
        out[prefix + "c_attn.weight"] = w
        if b is not None:
            out[prefix + "c_attn.bias"] = b
    out[prefix + "c_proj.weight"] = mha.out_proj.weight.grad
    if mha.out_proj.bias is not None:
        out[prefix + "c_proj.bias"] = mha.out_proj.bias.grad
    return out


def block_map(layer, decoder):
    """(our name -> torch parameter) for a TransformerEncoderLayer / DecoderLayer."""
    pairs = {"mlp.c_fc.weight": layer.linear1.weight, "mlp.c_fc.bias": layer.linear1.bias,
             "mlp.c_proj.weight": layer.linear2.weight, "mlp.c_proj.bias": layer.linear2.bias,
             "ln_1.weight": layer.norm1.weight, "ln_1.bias": layer.norm1.bias,
             "ln_2.weight": layer.norm2.weight, "ln_2.bias": layer.norm2.bias}
    if decoder:
        pairs.update({"ln_3.weight": layer.norm3.weight, "ln_3.bias": layer.norm3.bias})
    return pairs


def save_case(name, config, inputs, masks, params, output, out_weight, grads_params, extra=None):
    tensors = {"output": output, "out_weight": out_weight}
    for k, v in inputs.items():
        tensors["input." + k] = v
        tensors["grad.input." + k] = v.grad
    for k, v in masks.items():
        tensors["mask." + k] = v.to(torch.float32)
    for k, v in params.items():
        tensors["param." + k] = v
    for k, v in grads_params.items():
        tensors["grad.param." + k] = v
    tensors.update(extra or {})
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in tensors.items()}
    path = os.path.join(OUT_DIR, name + ".safetensors")
    safetensors_io.save_file(tensors, path, metadata={"config": json.dumps(config, sort_keys=True)})
    print(f"wrote {os.path.relpath(path, ROOT)} ({len(tensors)} tensors)")


def backward_with_weight(output):
    W = torch.randn_like(output)
    (output * W).sum().backward()
    return W


# ---- LayerNorm ----
def layernorm_case(name, bias):
    x = torch.randn(B, T, C, requires_grad=True)
    weight = (1 + 0.2 * torch.randn(C)).requires_grad_()
    b = (0.2 * torch.randn(C)).requires_grad_() if bias else None
    out = torch.nn.functional.layer_norm(x, (C,), weight, b, 1e-5)
    W = backward_with_weight(out)
    params = {"weight": weight} | ({"bias": b} if bias else {})
    save_case(name, {"dim": C, "eps": 1e-5, "bias": bias}, {"x": x}, {}, params, out, W,
              {k: v.grad for k, v in params.items()})


# ---- MultiheadAttention ----
def mha_case(name, cross=False, causal=False, key_padding=None, bias=True):
    mha = nn.MultiheadAttention(C, H, dropout=0.0, bias=bias, batch_first=True)
    randomize(mha)
    x = torch.randn(B, T, C, requires_grad=True)
    inputs, masks = {"x": x}, {}
    if cross:
        memory = torch.randn(B, S, C, requires_grad=True)
        inputs["memory"] = memory
        kv = memory
    else:
        kv = x
    L = kv.shape[1]
    kpm = padding(key_padding, L) if key_padding else None
    if kpm is not None:
        masks["key_padding"] = kpm
    out, attn = mha(x, kv, kv, key_padding_mask=kpm, attn_mask=causal_mask(T) if causal else None,
                    need_weights=True, average_attn_weights=False)
    W = backward_with_weight(out)
    config = {"d_model": C, "n_head": H, "bias": bias, "cross": cross, "causal": causal}
    save_case(name, config, inputs, masks, mha_params(mha, cross), out, W, mha_grads(mha, cross),
              {"attn_weights": attn})


# ---- TransformerEncoderLayer / TransformerDecoderLayer ----
def encoder_case(name, norm_first):
    layer = nn.TransformerEncoderLayer(C, H, dim_feedforward=F, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=norm_first)
    randomize(layer)
    x = torch.randn(B, T, C, requires_grad=True)
    kpm = padding([T, T - 2], T)
    out = layer(x, src_key_padding_mask=kpm)
    W = backward_with_weight(out)
    tp = block_map(layer, False)
    params = mha_params(layer.self_attn, False, "attn.") | tp
    grads = mha_grads(layer.self_attn, False, "attn.") | {k: v.grad for k, v in tp.items()}
    config = {"d_model": C, "n_head": H, "d_ff": F, "norm_first": norm_first, "activation": "gelu"}
    save_case(name, config, {"x": x}, {"key_padding": kpm}, params, out, W, grads)


def decoder_case(name, norm_first):
    layer = nn.TransformerDecoderLayer(C, H, dim_feedforward=F, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=norm_first)
    randomize(layer)
    x = torch.randn(B, T, C, requires_grad=True)
    memory = torch.randn(B, S, C, requires_grad=True)
    tgt_pad, mem_pad = padding([T, T - 1], T), padding([S - 2, S], S)
    out = layer(x, memory, tgt_mask=causal_mask(T), tgt_key_padding_mask=tgt_pad,
                memory_key_padding_mask=mem_pad)
    W = backward_with_weight(out)
    tp = block_map(layer, True)
    params = (mha_params(layer.self_attn, False, "attn.") |
              mha_params(layer.multihead_attn, True, "cross_attn.") | tp)
    grads = (mha_grads(layer.self_attn, False, "attn.") |
             mha_grads(layer.multihead_attn, True, "cross_attn.") | {k: v.grad for k, v in tp.items()})
    config = {"d_model": C, "n_head": H, "d_ff": F, "norm_first": norm_first, "activation": "gelu"}
    save_case(name, config, {"x": x, "memory": memory},
              {"tgt_padding": tgt_pad, "memory_padding": mem_pad}, params, out, W, grads)


# ---- nanoGPT-layout GPT: conversion and parity ----
def gpt_case(name, bias, compiled_prefix):
    cfg = nanogpt_model.GPTConfig(block_size=16, vocab_size=61, n_layer=2, n_head=4, n_embd=32,
                                  dropout=0.0, bias=bias)
    model = nanogpt_model.GPT(cfg)
    with torch.no_grad():  # "trained-looking" weights: larger than the 0.02 init, nonzero biases
        for pname, p in model.named_parameters():
            if "ln" in pname:
                p.copy_((1.0 if pname.endswith("weight") else 0.0) + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.15 * torch.randn_like(p))
    model_args = dict(n_layer=2, n_head=4, n_embd=32, block_size=16, bias=bias, vocab_size=61,
                      dropout=0.0)
    state = model.state_dict()
    if compiled_prefix:
        state = {"_orig_mod." + k: v for k, v in state.items()}
    conv_dir = os.path.join(OUT_DIR, name)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "ckpt.pt")
        torch.save({"model": state, "model_args": model_args, "iter_num": 100,
                    "best_val_loss": 2.5, "config": {}}, ckpt)
        nanogpt_convert.to_safetensors(ckpt, conv_dir)
        # and back: nanoGPT's layout must load the result strictly, with the same numbers
        back = os.path.join(tmp, "back.pt")
        nanogpt_convert.to_nanogpt(os.path.join(conv_dir, "model.safetensors"),
                                   os.path.join(conv_dir, "config.json"), back)
        ck = torch.load(back, map_location="cpu")
        again = nanogpt_model.GPT(nanogpt_model.GPTConfig(**ck["model_args"]))
        again.load_state_dict(ck["model"], strict=True)
        for (n1, p1), (n2, p2) in zip(model.state_dict().items(), again.state_dict().items()):
            assert n1 == n2 and torch.equal(p1, p2), f"round trip changed {n1}"
        assert again.lm_head.weight is again.transformer.wte.weight, "round trip lost the tying"

    Tn = 11
    idx = torch.randint(0, cfg.vocab_size, (B, Tn))
    targets = torch.randint(0, cfg.vocab_size, (B, Tn))
    targets[0, 3] = targets[1, 7] = -1  # ignored positions, as nanoGPT's ignore_index=-1
    logits, loss = model(idx, targets)
    loss.backward()
    tensors = {"logits": logits, "loss": loss.reshape(1)}
    for pname, p in model.named_parameters():  # tied wte/lm_head listed once, grad of both uses
        tensors["grad.param." + pname] = p.grad
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in tensors.items()}
    meta = {"idx": json.dumps(idx.tolist()), "targets": json.dumps(targets.tolist()),
            "weights": os.path.relpath(os.path.join(conv_dir, "model.safetensors"), ROOT),
            "config": os.path.relpath(os.path.join(conv_dir, "config.json"), ROOT)}
    path = os.path.join(OUT_DIR, name + "_ref.safetensors")
    safetensors_io.save_file(tensors, path, metadata=meta)
    print(f"wrote {os.path.relpath(conv_dir, ROOT)}/ and {os.path.relpath(path, ROOT)} "
          f"(loss {loss.item():.4f})")


# ---- GPT in Xiong et al.'s setting: scaled embeddings, sinusoidal positions, Post-LN, ReLU ----
class PaperMLP(nn.Module):
    def __init__(self, C, bias):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C, bias=bias)
        self.c_proj = nn.Linear(4 * C, C, bias=bias)

    def forward(self, x):
        return self.c_proj(torch.relu(self.c_fc(x)))


class PaperBlock(nn.Module):
    """Post-LN: x = LN(x + attn(x)); x = LN(x + mlp(x))."""

    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nanogpt_model.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = nanogpt_model.CausalSelfAttention(cfg)
        self.ln_2 = nanogpt_model.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = PaperMLP(cfg.n_embd, cfg.bias)

    def forward(self, x):
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.mlp(x))


class PaperGPT(nn.Module):
    """sqrt(C) * wte[idx] + sinusoid (sin on even, cos on odd channels), Post-LN blocks, no
    final LayerNorm, an untied head."""

    def __init__(self, cfg):
        super().__init__()
        self.C = cfg.n_embd
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            h=nn.ModuleList([PaperBlock(cfg) for _ in range(cfg.n_layer)])))
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        pos = torch.arange(cfg.block_size, dtype=torch.float64)[:, None]
        c = torch.arange(cfg.n_embd)
        freq = torch.pow(10000.0, -(c - c % 2).to(torch.float64) / cfg.n_embd)
        angle = pos * freq
        self.pe = torch.where(c % 2 == 0, torch.sin(angle), torch.cos(angle)).to(torch.float32)

    def forward(self, idx):
        T = idx.size(1)
        x = self.transformer.wte(idx) * math.sqrt(self.C) + self.pe[:T]
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(x)


def gpt_paper_case(name="gpt_post_ln_paper"):
    torch.manual_seed(4321)  # its own seed: the other cases' draws stay as they were
    cfg = nanogpt_model.GPTConfig(block_size=16, vocab_size=61, n_layer=2, n_head=4, n_embd=32,
                                  dropout=0.0, bias=True)
    model = PaperGPT(cfg)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "ln" in pname:
                p.copy_((1.0 if pname.endswith("weight") else 0.0) + 0.2 * torch.randn_like(p))
            elif "wte" in pname:
                p.copy_(torch.randn_like(p) / math.sqrt(cfg.n_embd))
            else:
                p.copy_(0.15 * torch.randn_like(p))
    conv_dir = os.path.join(OUT_DIR, name)
    os.makedirs(conv_dir, exist_ok=True)
    weights = {k: v.detach().contiguous() for k, v in model.named_parameters()}
    safetensors_io.save_file(weights, os.path.join(conv_dir, "model.safetensors"))
    config = {"vocab_size": 61, "block_size": 16, "n_layer": 2, "n_head": 4, "n_embd": 32, "d_ff": 0,
              "dropout": 0.0, "bias": True, "tied_head": False, "pos_encoding": "sinusoidal",
              "norm": "post", "activation": "relu", "ln_eps": 1e-5, "scale_embeddings": True}
    with open(os.path.join(conv_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    Tn = 11
    idx = torch.randint(0, cfg.vocab_size, (B, Tn))
    targets = torch.randint(0, cfg.vocab_size, (B, Tn))
    targets[0, 3] = -1
    logits = model(idx)
    loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
    loss.backward()
    tensors = {"logits": logits, "loss": loss.reshape(1)}
    for pname, p in model.named_parameters():
        tensors["grad.param." + pname] = p.grad
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in tensors.items()}
    meta = {"idx": json.dumps(idx.tolist()), "targets": json.dumps(targets.tolist()),
            "weights": os.path.relpath(os.path.join(conv_dir, "model.safetensors"), ROOT),
            "config": os.path.relpath(os.path.join(conv_dir, "config.json"), ROOT)}
    path = os.path.join(OUT_DIR, name + "_ref.safetensors")
    safetensors_io.save_file(tensors, path, metadata=meta)
    print(f"wrote {os.path.relpath(conv_dir, ROOT)}/ and {os.path.relpath(path, ROOT)} "
          f"(loss {loss.item():.4f})")

def interop_file():
    """A file written by this Python writer, which the C++ writer must reproduce byte for byte."""
    t = {"a": torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7,
         "b": torch.tensor([-1.5, 2.25], dtype=torch.float64),
         "z": torch.zeros(0, 3, dtype=torch.float32)}
    path = os.path.join(OUT_DIR, "python_written.safetensors")
    safetensors_io.save_file(t, path, metadata={"format": "pt", "writer": "tools/safetensors_io.py"})
    print(f"wrote {os.path.relpath(path, ROOT)}")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    torch.manual_seed(1234)
    interop_file()
    layernorm_case("layernorm", bias=True)
    layernorm_case("layernorm_nobias", bias=False)
    mha_case("mha_self_causal", causal=True)
    mha_case("mha_self_causal_nobias", causal=True, bias=False)
    mha_case("mha_self_padding", key_padding=[T, T - 2])
    mha_case("mha_cross", cross=True, key_padding=[S - 1, S - 3])
    encoder_case("encoder_layer_post_ln", norm_first=False)
    encoder_case("encoder_layer_pre_ln", norm_first=True)
    decoder_case("decoder_layer_post_ln", norm_first=False)
    decoder_case("decoder_layer_pre_ln", norm_first=True)
    gpt_case("nanogpt_bias", bias=True, compiled_prefix=False)
    gpt_case("nanogpt_nobias", bias=False, compiled_prefix=True)
    gpt_paper_case()


if __name__ == "__main__":
    main()
