#!/usr/bin/python3
"""Writes the PyTorch reference data for grouped-query and multi-query self-attention
(tests/nn/test_parity_nn.cpp, "parity grouped-query ..."), issue 20.

PyTorch 1.13 has no GQA, so the torch side is written out: one c_attn Linear (C + 2 G D, C) gives
q (H heads), k and v (G heads each); every K/V head is repeated H / G times
(repeat_interleave on the head axis, as Llama's repeat_kv), then plain softmax attention and
c_proj. Run from the project root with Debian's python3-torch (1.13):

    /usr/bin/python3 tests/reference/gen_gqa_ref.py

The files use gen_nn_ref.py's layout (input.x, mask.key_padding, param.<our name>, out_weight,
output, grad.*); parameter names are already ours (c_attn, c_proj).
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_nn_ref import B, T, C, H, backward_with_weight, causal_mask, padding, randomize, save_case  # noqa: E402


class GroupedQuerySelfAttention(nn.Module):
    def __init__(self, n_kv_head):
        super().__init__()
        self.G, self.D = n_kv_head, C // H
        self.c_attn = nn.Linear(C, C + 2 * self.G * self.D)
        self.c_proj = nn.Linear(C, C)

    def forward(self, x, causal, key_padding):
        G, D = self.G, self.D
        q, k, v = self.c_attn(x).split([C, G * D, G * D], dim=2)
        q = q.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, G, D).transpose(1, 2).repeat_interleave(H // G, dim=1)  # (B, H, T, D)
        v = v.view(B, T, G, D).transpose(1, 2).repeat_interleave(H // G, dim=1)
        att = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
        if causal:
            att = att.masked_fill(causal_mask(T), float("-inf"))
        if key_padding is not None:
            att = att.masked_fill(key_padding[:, None, None, :], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v  # (B, H, T, D)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


def gqa_case(name, n_kv_head, causal, key_padding=None):
    m = GroupedQuerySelfAttention(n_kv_head)
    randomize(m)
    x = torch.randn(B, T, C, requires_grad=True)
    kpm = padding(key_padding, T) if key_padding else None
    out = m(x, causal, kpm)
    W = backward_with_weight(out)
    params = dict(m.named_parameters())
    config = {"d_model": C, "n_head": H, "n_kv_head": n_kv_head, "causal": causal}
    save_case(name, config, {"x": x}, {"key_padding": kpm} if kpm is not None else {}, params, out, W,
              {k: p.grad for k, p in params.items()})


def main():
    torch.manual_seed(2020)
    gqa_case("gqa_self_causal", n_kv_head=2, causal=True)
    gqa_case("mqa_self_padding", n_kv_head=1, causal=False, key_padding=[5, 3])


if __name__ == "__main__":
    main()
