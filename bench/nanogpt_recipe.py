#!/usr/bin/python3
"""nanoGPT's CPU recipe on Tiny Shakespeare, trained with PyTorch on this machine: the reference
for configs/shakespeare_char_cpu.json (its val loss and its wall time).

Our own re-statement of what nanoGPT's train.py does with config/train_shakespeare_char.py and
the CPU overrides (--device=cpu --compile=False --eval_iters=20 --block_size=64 --batch_size=12
--n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0):
char-level data split 90/10, random windows, AdamW (lr 1e-3, betas 0.9/0.99, weight decay 0.1 on
every 2-D parameter), linear warmup 100 steps then cosine to 1e-4, clip 1.0, an estimate of the
losses over 20 batches every 250 steps, plus (our addition) the loss over the whole val split in
non-overlapping 64-token windows. The model is tests/reference/nanogpt_model.py (nanoGPT's
layout, no bias). Run from the project root with Debian's torch:

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/nanogpt_recipe.py [--seed 1337] [--text PATH]

(--iters, --warmup and --eval-interval shorten it for tests/train/test_nanogpt_replay.cpp.)

nanoGPT's own tuned setting is OPENBLAS_NUM_THREADS=1 (torch's intra-op threads stay at 2).
Prints progress and, last, one JSON line with the losses and the wall time.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from nanogpt_model import GPT, GPTConfig  # noqa: E402

ap = argparse.ArgumentParser()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ap.add_argument("--text", default=os.path.join(root, "data", "corpora", "tinyshakespeare.txt"))
ap.add_argument("--seed", type=int, default=1337)
ap.add_argument("--iters", type=int, default=2000)
ap.add_argument("--eval-interval", type=int, default=250)
ap.add_argument("--warmup", type=int, default=100)
args = ap.parse_args()

block, batch, iters, warmup, lr_max, lr_min, eval_iters, eval_interval = 64, 12, args.iters, args.warmup, 1e-3, 1e-4, 20, args.eval_interval
torch.manual_seed(args.seed)
text = open(args.text, encoding="utf-8").read()
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]

model = GPT(GPTConfig(block_size=block, vocab_size=len(chars), n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False))
params = [p for p in model.parameters() if p.requires_grad]
groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
          {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
opt = torch.optim.AdamW(groups, lr=lr_max, betas=(0.9, 0.99))


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block, (batch,))
    return torch.stack([d[i:i + block] for i in ix]), torch.stack([d[i + 1:i + 1 + block] for i in ix])


def get_lr(it):
    if it < warmup:
        return lr_max * (it + 1) / (warmup + 1)
    if it > iters:
        return lr_min
    ratio = (it - warmup) / (iters - warmup)
    return lr_min + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr_max - lr_min)


@torch.no_grad()
def estimate_loss():
    model.eval()
    out = {}
    for split in ("train", "val"):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            x, y = get_batch(split)
            losses[k] = model(x, y)[1].item()
        out[split] = losses.mean().item()
    model.train()
    return out


@torch.no_grad()
def full_val_loss():
    model.eval()
    windows = (len(val_data) - 1) // block
    total, count = 0.0, 0
    for w0 in range(0, windows, 64):
        ws = range(w0, min(windows, w0 + 64))
        x = torch.stack([val_data[w * block:(w + 1) * block] for w in ws])
        y = torch.stack([val_data[w * block + 1:(w + 1) * block + 1] for w in ws])
        total += model(x, y)[1].item() * len(ws)
        count += len(ws)
    return total / count, windows


start = time.time()
x, y = get_batch("train")
for it in range(iters + 1):
    for g in opt.param_groups:
        g["lr"] = get_lr(it)
    if it % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f} ({time.time() - start:.0f} s)", flush=True)
    if it == iters:
        break
    _, loss = model(x, y)
    x, y = get_batch("train")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
wall = time.time() - start
full, windows = full_val_loss()
print(json.dumps({"framework": "torch " + torch.__version__, "seed": args.seed, "iters": iters,
                  "val_loss_estimate": losses["val"], "train_loss_estimate": losses["train"],
                  "full_val_loss": full, "full_val_windows": windows, "wall_s_to_last_eval": wall,
                  "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default")}))
