#!/usr/bin/python3
"""Reference data for TorchGenerator and the PyTorch-generator init (train.rng "torch"), from
torch 1.13's CPU generator.

Run from the project root:  /usr/bin/python3 tests/reference/gen_torch_rng_ref.py
Writes tests/reference/nn/torch_rng.safetensors (float64 for integers and float32 values, exact):
  draws.*       one stream after torch.manual_seed(1337): randint(1000003, (7,)), normal_ on 20
                floats (a ragged tail), uniform_(-1, 1) on 3, normal_ on 5 (the small-tensor
                double path, whose second value is cached), normal_(1, 0.5) on 16, randint again
  gpt_<case>.*  nanoGPT's model (tests/reference/nanogpt_model.py) built right after
                torch.manual_seed(<seed>): every parameter as nanoGPT names it, then
                "starts": the window starts of 3 batches drawn next, torch.randint(1000 - T, (4,))
                each (nanoGPT's get_batch), which checks that the stream position after the init
                matches
The C++ test (tests/nn/test_torch_init.cpp) reads this file and never needs torch.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "tools"))
sys.path.insert(0, HERE)
import nanogpt_model  # noqa: E402
import safetensors_io  # noqa: E402

tensors = {}
torch.manual_seed(1337)
tensors["draws.randint_a"] = torch.randint(1000003, (7,)).double()
tensors["draws.normal_20"] = torch.empty(20).normal_()
tensors["draws.uniform_3"] = torch.empty(3).uniform_(-1, 1)
tensors["draws.normal_5"] = torch.empty(5).normal_()
tensors["draws.normal_16_mean1_std05"] = torch.empty(16).normal_(1.0, 0.5)
tensors["draws.randint_b"] = torch.randint(1000003, (7,)).double()

CASES = {
    "nobias": dict(seed=1337, block_size=16, vocab_size=65, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=False),
    "bias": dict(seed=7, block_size=8, vocab_size=11, n_layer=3, n_head=2, n_embd=8, dropout=0.0, bias=True),
}
meta = {}
for case, cfg in CASES.items():
    cfg = dict(cfg)
    seed = cfg.pop("seed")
    torch.manual_seed(seed)
    model = nanogpt_model.GPT(nanogpt_model.GPTConfig(**cfg))
    for name, p in model.named_parameters():
        tensors[f"gpt_{case}.{name}"] = p.detach().clone()
    starts = [torch.randint(1000 - cfg["block_size"], (4,)) for _ in range(3)]
    tensors[f"gpt_{case}.starts"] = torch.stack(starts).double()
    meta[case] = dict(cfg, seed=seed)

path = os.path.join(HERE, "nn", "torch_rng.safetensors")
safetensors_io.save_file(tensors, path, metadata={"cases": json.dumps(meta, sort_keys=True),
                                                   "torch": torch.__version__})
print(f"wrote {path}: {len(tensors)} tensors")
