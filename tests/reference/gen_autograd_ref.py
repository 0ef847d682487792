#!/usr/bin/python3
"""Writes the PyTorch reference data for the autograd parity tests (tests/autograd/test_parity.cpp).

Run from the project root with Debian's python3-torch (1.13):

    /usr/bin/python3 tests/reference/gen_autograd_ref.py

For every op it writes tests/reference/autograd/<op>.json holding two cases, float32 and
float64, each with: seeded inputs, the op's parameters, the output, fixed random weights W of
the output's shape, and the gradient of sum(out * W) with respect to every input (None for an
input that takes no gradient). The C++ test runs the same op on the same inputs, calls
out.backward(W), and compares. It also writes lowp.json: float32 values (as bit patterns) and
their fp16 bits (numpy.float16) and bf16 bits (torch.bfloat16), edge cases first.

The data files are committed; the C++ tests never need torch.
"""
import json
import math
import os
import struct
import zlib

import numpy as np
import torch
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd")


def tensor_json(t):
    t = t.detach()
    return {"shape": list(t.shape), "values": [float(v) for v in t.reshape(-1).tolist()]}


# ---- input makers: (shape) -> float64 tensor; cast to the case's dtype before use ----
def uniform(*shape):
    return torch.rand(shape, dtype=torch.float64) * 2 - 1  # [-1, 1)


def positive(*shape):
    return torch.rand(shape, dtype=torch.float64) * 1.5 + 0.5  # [0.5, 2)


def away(*shape):  # |x| >= 0.2: no relu kink, no near-ties in max
    u = torch.rand(shape, dtype=torch.float64)
    return torch.where(u < 0.5, -1.0, 1.0) * (0.2 + 1.6 * (u - 0.5).abs())


OPS = {}  # name -> (input makers, params, torch function(inputs, params) -> output, no-grad input indices)


def op(name, makers, fn, params=None, no_grad=()):
    OPS[name] = (makers, params or {}, fn, set(no_grad))


# elementwise, same shape and broadcast
op("add", [lambda: uniform(2, 3), lambda: uniform(2, 3)], lambda x, p: x[0] + x[1])
op("sub", [lambda: uniform(2, 3), lambda: uniform(2, 3)], lambda x, p: x[0] - x[1])
op("mul", [lambda: uniform(2, 3), lambda: uniform(2, 3)], lambda x, p: x[0] * x[1])
op("div", [lambda: uniform(2, 3), lambda: positive(2, 3)], lambda x, p: x[0] / x[1])
op("add_broadcast_2x3_3", [lambda: uniform(2, 3), lambda: uniform(3)], lambda x, p: x[0] + x[1])
op("sub_broadcast_scalar_lhs", [lambda: uniform(), lambda: uniform(2, 3)], lambda x, p: x[0] - x[1])
op("mul_broadcast_2x1x4_3x1", [lambda: uniform(2, 1, 4), lambda: uniform(3, 1)], lambda x, p: x[0] * x[1])
op("div_broadcast_2x3x1_1x1x4", [lambda: uniform(2, 3, 1), lambda: positive(1, 1, 4)], lambda x, p: x[0] / x[1])
op("neg", [lambda: uniform(2, 3)], lambda x, p: -x[0])
op("pow", [lambda: positive(2, 3)], lambda x, p: x[0] ** p["exponent"], {"exponent": 2.5})
op("pow_int", [lambda: uniform(2, 3)], lambda x, p: x[0] ** p["exponent"], {"exponent": 3.0})
op("exp", [lambda: uniform(2, 3)], lambda x, p: torch.exp(x[0]))
op("log", [lambda: positive(2, 3)], lambda x, p: torch.log(x[0]))
op("sqrt", [lambda: positive(2, 3)], lambda x, p: torch.sqrt(x[0]))
op("tanh", [lambda: uniform(2, 3)], lambda x, p: torch.tanh(x[0]))
op("sigmoid", [lambda: uniform(2, 3)], lambda x, p: torch.sigmoid(x[0]))
op("relu", [lambda: away(2, 3)], lambda x, p: torch.relu(x[0]))
op("gelu", [lambda: uniform(3, 4) * 3], lambda x, p: F.gelu(x[0]))
op("gelu_tanh", [lambda: uniform(3, 4) * 3], lambda x, p: F.gelu(x[0], approximate="tanh"))
op("to", [lambda: uniform(2, 3)], lambda x, p: x[0].to(torch.float64 if x[0].dtype == torch.float32 else torch.float32))

# reductions
op("sum_all", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].sum())
op("sum_axes", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].sum(dim=p["axes"], keepdim=p["keepdim"]),
   {"axes": [0, 2], "keepdim": True})
op("sum_axis_last", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].sum(dim=p["axes"], keepdim=p["keepdim"]),
   {"axes": [-1], "keepdim": False})
op("mean_all", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].mean())
op("mean_axes", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].mean(dim=p["axes"], keepdim=p["keepdim"]),
   {"axes": [1], "keepdim": True})
op("max_axis", [lambda: away(2, 3, 4)], lambda x, p: x[0].max(dim=p["axis"], keepdim=p["keepdim"])[0],
   {"axis": 1, "keepdim": False})
op("max_axis_keepdim", [lambda: away(2, 3, 4)], lambda x, p: x[0].max(dim=p["axis"], keepdim=p["keepdim"])[0],
   {"axis": 0, "keepdim": True})
op("sum_axes_size1", [lambda: uniform(1, 3, 1)], lambda x, p: x[0].sum(dim=p["axes"], keepdim=p["keepdim"]),
   {"axes": [0, 2], "keepdim": False})
op("mean_all_size1", [lambda: uniform(1, 1)], lambda x, p: x[0].mean())
op("max_axis_size1", [lambda: away(1, 4)], lambda x, p: x[0].max(dim=p["axis"], keepdim=p["keepdim"])[0],
   {"axis": 0, "keepdim": False})
op("sum_to", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].sum(dim=0).sum(dim=-1, keepdim=True),
   {"shape": [3, 1]})
op("expand", [lambda: uniform(3, 1)], lambda x, p: x[0].expand(*p["shape"]), {"shape": [2, 3, 4]})

# shape ops
op("reshape", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].reshape(p["shape"]), {"shape": [4, -1]})
op("transpose", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].transpose(p["axis0"], p["axis1"]),
   {"axis0": 0, "axis1": 2})
op("permute", [lambda: uniform(2, 3, 4)], lambda x, p: x[0].permute(*p["axes"]), {"axes": [2, 0, 1]})
op("slice_step", [lambda: uniform(2, 5, 3)], lambda x, p: x[0][:, 0:5:2], {"axis": 1, "start": 0, "end": 5, "step": 2})
op("slice_negative", [lambda: uniform(2, 5)], lambda x, p: x[0][:, -4:-1], {"axis": -1, "start": -4, "end": -1, "step": 1})
op("concat", [lambda: uniform(2, 1, 4), lambda: uniform(2, 3, 4)], lambda x, p: torch.cat(x, dim=p["axis"]), {"axis": 1})

# matrix products
def mm(x, p):
    a = x[0].transpose(-1, -2) if p["trans_a"] else x[0]
    b = x[1].transpose(-1, -2) if p["trans_b"] else x[1]
    return a @ b


op("matmul", [lambda: uniform(3, 4), lambda: uniform(4, 5)], mm, {"trans_a": False, "trans_b": False})
op("matmul_trans_a", [lambda: uniform(4, 3), lambda: uniform(4, 5)], mm, {"trans_a": True, "trans_b": False})
op("matmul_trans_b", [lambda: uniform(3, 4), lambda: uniform(5, 4)], mm, {"trans_a": False, "trans_b": True})
op("matmul_trans_ab", [lambda: uniform(4, 3), lambda: uniform(5, 4)], mm, {"trans_a": True, "trans_b": True})
op("matmul_batched_broadcast", [lambda: uniform(2, 1, 3, 4), lambda: uniform(3, 4, 5)], mm,
   {"trans_a": False, "trans_b": False})
op("matmul_batched_2d_rhs", [lambda: uniform(2, 3, 4), lambda: uniform(4, 5)], mm, {"trans_a": False, "trans_b": False})
op("matmul_batched_2d_rhs_trans_b", [lambda: uniform(2, 3, 4), lambda: uniform(5, 4)], mm,
   {"trans_a": False, "trans_b": True})
op("linear", [lambda: uniform(2, 4, 3), lambda: uniform(5, 3), lambda: uniform(5)],
   lambda x, p: F.linear(x[0], x[1], x[2]))
op("linear_no_bias", [lambda: uniform(4, 3), lambda: uniform(5, 3)], lambda x, p: F.linear(x[0], x[1]))

# neural-network ops
op("softmax", [lambda: uniform(2, 3, 4) * 2], lambda x, p: torch.softmax(x[0], dim=p["axis"]), {"axis": -1})
op("softmax_axis1", [lambda: uniform(2, 3, 4) * 2], lambda x, p: torch.softmax(x[0], dim=p["axis"]), {"axis": 1})
op("log_softmax", [lambda: uniform(2, 3, 4) * 2], lambda x, p: torch.log_softmax(x[0], dim=p["axis"]), {"axis": -1})
op("log_softmax_axis0", [lambda: uniform(2, 3, 4) * 2], lambda x, p: torch.log_softmax(x[0], dim=p["axis"]), {"axis": 0})
op("masked_fill", [lambda: uniform(2, 3, 4)],
   lambda x, p: x[0].masked_fill(torch.tensor(p["mask"]["values"]).reshape(p["mask"]["shape"]) != 0, p["value"]),
   {"mask": {"shape": [3, 1], "values": [0, 1, 0]}, "value": -2.5})
op("embedding", [lambda: uniform(5, 3)],
   lambda x, p: F.embedding(torch.tensor(p["ids"]["values"]).reshape(p["ids"]["shape"]), x[0]),
   {"ids": {"shape": [2, 4], "values": [1, 3, 1, 0, 3, 3, 4, 1]}})


def ce(x, p):
    V = x[0].shape[-1]
    targets = torch.tensor(p["targets"]["values"])
    return F.cross_entropy(x[0].reshape(-1, V), targets, ignore_index=p["ignore_index"],
                           label_smoothing=p["label_smoothing"])


op("cross_entropy", [lambda: uniform(2, 3, 5) * 3], ce,
   {"targets": {"shape": [2, 3], "values": [1, 0, 4, 2, 2, 3]}, "ignore_index": -100, "label_smoothing": 0.0})
op("cross_entropy_ignore", [lambda: uniform(4, 5) * 3], ce,
   {"targets": {"shape": [4], "values": [1, -100, 4, -100]}, "ignore_index": -100, "label_smoothing": 0.0})
op("cross_entropy_smoothing", [lambda: uniform(4, 5) * 3], ce,
   {"targets": {"shape": [4], "values": [1, 0, 4, 2]}, "ignore_index": -100, "label_smoothing": 0.1})
op("cross_entropy_ignore_smoothing", [lambda: uniform(4, 5) * 3], ce,
   {"targets": {"shape": [4], "values": [1, 3, 4, 3]}, "ignore_index": 3, "label_smoothing": 0.2})
op("layer_norm", [lambda: uniform(2, 3, 5), lambda: uniform(5), lambda: uniform(5)],
   lambda x, p: F.layer_norm(x[0], (x[0].shape[-1],), x[1], x[2], p["eps"]), {"eps": 1e-5})
op("layer_norm_no_affine", [lambda: uniform(4, 6)],
   lambda x, p: F.layer_norm(x[0], (x[0].shape[-1],), None, None, p["eps"]), {"eps": 1e-5})


def attention(x, p):  # composed: torch 1.13 has no fused scaled_dot_product_attention
    q, k, v = x
    T, S, D = q.shape[-2], k.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(D)
    if p["causal"]:
        t = torch.arange(T).reshape(T, 1) + (S - T)
        s = torch.arange(S).reshape(1, S)
        scores = scores.masked_fill(s > t, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


op("attention", [lambda: uniform(1, 2, 3, 4), lambda: uniform(1, 2, 3, 4), lambda: uniform(1, 2, 3, 4)],
   attention, {"causal": False})
op("attention_causal", [lambda: uniform(1, 2, 3, 4), lambda: uniform(1, 2, 5, 4), lambda: uniform(1, 2, 5, 4)],
   attention, {"causal": True})


def make_case(name, dtype, seed):
    makers, params, fn, no_grad = OPS[name]
    torch.manual_seed(seed)
    inputs = []
    for i, make in enumerate(makers):
        t = make().to(dtype)
        inputs.append(t.requires_grad_(i not in no_grad))
    out = fn(inputs, params)
    weights = torch.rand(out.shape, dtype=torch.float64).to(out.dtype) * 2 - 1
    (out * weights).sum().backward()
    return {
        "dtype": "float32" if dtype == torch.float32 else "float64",
        "inputs": [tensor_json(t) for t in inputs],
        "output": tensor_json(out),
        "weights": tensor_json(weights),
        "grads": [tensor_json(t.grad) if t.grad is not None else None for t in inputs],
    }


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def lowp_reference():
    edge = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.0, 65520.0, -65520.0, 65536.0, 1e6, 2.0 ** -14,
            2.0 ** -24, 2.0 ** -25, -2.0 ** -25, 2.0 ** -25 * 1.5, 2.0 ** -26, 3 * 2.0 ** -25,
            1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -11 + 2.0 ** -20, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8,
            1 + 2.0 ** -8 + 2.0 ** -20, 1.0 / 3, -2.5e-8, 3e-5, 6.1e-5, 3.3895313892515355e38,
            3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38,
            float("inf"), float("-inf"), float("nan")]
    rng = np.random.default_rng(0)
    rand = (rng.standard_normal(200) * np.exp2(rng.integers(-30, 20, 200))).tolist()
    values = np.array(edge + rand, dtype=np.float32)
    with np.errstate(over="ignore"):  # overflow to inf is what is being recorded
        fp16 = values.astype(np.float16).view(np.uint16)
    bf16 = torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    return {
        "note": "float32 input bits -> fp16 bits (numpy.float16) and bf16 bits (torch.bfloat16)",
        "f32_bits": [int(f32_bits(float(v))) if not math.isnan(v) else 0x7FC00000 for v in values],
        "fp16_bits": [int(b) for b in fp16],
        "bf16_bits": [int(b) for b in bf16],
    }


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for name in sorted(OPS):
        seed = zlib.crc32(name.encode())  # per op, so adding an op leaves the other files unchanged
        data = {"op": name, "params": OPS[name][1],
                "cases": [make_case(name, torch.float32, seed), make_case(name, torch.float64, seed)]}
        with open(os.path.join(OUT_DIR, name + ".json"), "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
    with open(os.path.join(OUT_DIR, "lowp.json"), "w") as f:
        json.dump(lowp_reference(), f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(OPS)} op files and lowp.json to {OUT_DIR}")


if __name__ == "__main__":
    main()
