#!/usr/bin/python3
"""Reference data for the optim tests, from torch.optim and torch.nn.utils (torch 1.13).

Run from the project root:  /usr/bin/python3 tests/reference/gen_optim_ref.py
Writes tests/reference/optim/optim_ref.json and clip_ref.json. The C++ tests read these files
and never need torch.

optim_ref.json: four named parameters (an embedding, a linear weight and bias, a LayerNorm
weight), their float32 initial values, 10 steps of gradients (null = the parameter has no
gradient that step, so torch skips it), and for each optimizer configuration the parameter
values after every step. AdamW uses two param groups: decay for the parameters our DecayRule
selects, 0 for the others.
"""
import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim")
STEPS = 10

SHAPES = [("wte.weight", (6, 4)), ("h.0.mlp.fc.weight", (5, 4)), ("h.0.mlp.fc.bias", (5,)),
          ("ln_f.weight", (4,))]
# (step, name) pairs without a gradient.
MISSING = {(0, "h.0.mlp.fc.bias"), (3, "ln_f.weight"), (4, "ln_f.weight")}

CONFIGS = [
    # name, optimizer, options, decay rule ("all", "default" = dim>=2 and not embedding, "matrices")
    ("sgd_plain", "sgd", dict(lr=0.1), "all"),
    ("sgd_momentum", "sgd", dict(lr=0.1, momentum=0.9), "all"),
    ("sgd_nesterov", "sgd", dict(lr=0.1, momentum=0.9, nesterov=True), "all"),
    ("sgd_weight_decay", "sgd", dict(lr=0.1, momentum=0.9, weight_decay=0.05), "all"),
    ("sgd_dampening", "sgd", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01), "all"),
    ("adam", "adam", dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8), "all"),
    ("adam_weight_decay", "adam", dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1), "all"),
    ("adamw_default", "adamw", dict(lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1), "default"),
    ("adamw_matrices", "adamw", dict(lr=3e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.5), "matrices"),
]


def decays(rule, name, shape):
    if rule == "all":
        return True
    if len(shape) < 2:
        return False
    if rule == "matrices":
        return True
    return not any(p in name for p in ("wte", "wpe", "embed", "tok_emb", "pos_emb", "src_pos", "tgt_pos"))


def flat(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def optim_reference():
    g = torch.Generator().manual_seed(1234)
    init = {n: torch.randn(s, generator=g, dtype=torch.float32) for n, s in SHAPES}
    grads = []
    for step in range(STEPS):
        # Gradients of varied size per step, some tiny, some large.
        scale = [1.0, 0.01, 3.0, 0.3, 1e-3, 1.0, 0.5, 2.0, 0.05, 1.0][step]
        grads.append({n: None if (step, n) in MISSING else
                      (torch.randn(s, generator=g, dtype=torch.float32) * scale) for n, s in SHAPES})

    results = {}
    for cname, kind, opts, rule in CONFIGS:
        params = {n: init[n].clone().requires_grad_() for n, _ in SHAPES}
        if kind == "sgd":
            opt = torch.optim.SGD(list(params.values()), **opts, foreach=False)
        elif kind == "adam":
            opt = torch.optim.Adam(list(params.values()), **opts, foreach=False)
        else:
            wd = opts.pop("weight_decay")
            groups = [{"params": [params[n] for n, s in SHAPES if decays(rule, n, s)], "weight_decay": wd},
                      {"params": [params[n] for n, s in SHAPES if not decays(rule, n, s)], "weight_decay": 0.0}]
            opt = torch.optim.AdamW(groups, **opts, foreach=False)
            opts["weight_decay"] = wd
        after = []
        for step in range(STEPS):
            for n, _ in SHAPES:
                params[n].grad = None if grads[step][n] is None else grads[step][n].clone()
            opt.step()
            after.append({n: flat(params[n]) for n, _ in SHAPES})
        results[cname] = {"optimizer": kind, "options": {k: (list(v) if isinstance(v, tuple) else v)
                                                         for k, v in opts.items()},
                          "decay_rule": rule, "params_after_step": after}

    return {
        "torch_version": torch.__version__,
        "params": [{"name": n, "shape": list(s), "init": flat(init[n])} for n, s in SHAPES],
        "grads": [{n: (None if t is None else flat(t)) for n, t in step.items()} for step in grads],
        "configs": results,
    }


def clip_reference():
    g = torch.Generator().manual_seed(99)
    shapes = [(3, 4), (7,), (2, 2, 2)]
    grads = [torch.randn(s, generator=g, dtype=torch.float32) * 0.7 for s in shapes]
    cases = []
    for max_norm in (1.0, 2.5, 100.0):
        ps = [torch.zeros(s, requires_grad=True) for s in shapes]
        for p, gr in zip(ps, grads):
            p.grad = gr.clone()
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm)
        cases.append({"kind": "norm", "max_norm": max_norm, "total_norm": float(total),
                      "clipped": [flat(p.grad) for p in ps]})
    for clip_value in (0.05, 0.5):
        ps = [torch.zeros(s, requires_grad=True) for s in shapes]
        for p, gr in zip(ps, grads):
            p.grad = gr.clone()
        torch.nn.utils.clip_grad_value_(ps, clip_value)
        cases.append({"kind": "value", "clip_value": clip_value, "clipped": [flat(p.grad) for p in ps]})
    return {"torch_version": torch.__version__, "shapes": [list(s) for s in shapes],
            "grads": [flat(t) for t in grads], "cases": cases}


def write(name, data):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write("optim_ref.json", optim_reference())
    write("clip_ref.json", clip_reference())
