#!/usr/bin/python3
"""
torch_gpt_bench.py -- PyTorch CPU anchor: training-step speed of a GPT-2-style
decoder-only transformer, for side-by-side comparison with the C++ framework.

Run with Debian's torch (1.13.1, apt-get install python3-torch python3-numpy
libopenblas-dev) via /usr/bin/python3, NOT the pyenv python on PATH; from the project root:

  /usr/bin/python3 bench/torch_gpt_bench.py --vocab 65 --d 64  --layers 2 --heads 4 --T 32  --B 32 --threads 2   # tiny
  /usr/bin/python3 bench/torch_gpt_bench.py --vocab 65 --d 128 --layers 4 --heads 4 --T 128 --B 16 --threads 2   # small
  /usr/bin/python3 bench/torch_gpt_bench.py --vocab 65 --d 384 --layers 6 --heads 6 --T 256 --B 8  --threads 2 --steps 20  # medium

Model: token emb + learned pos emb, Pre-LN blocks (LN -> causal MHA with explicit
softmax(QK^T/sqrt(dk)) + mask -> residual; LN -> Linear(d,4d) -> GELU(tanh) ->
Linear(4d,d) -> residual), final LN, lm head tied to the token embedding, biases
everywhere (GPT-2), no dropout, init N(0, 0.02).  --sdpa uses
F.scaled_dot_product_attention when present (absent in torch 1.13 -> falls back
to the explicit path and reports sdpa_used=false).
Step timed = zero_grad + forward + cross-entropy + backward + clip_grad_norm_(1.0)
+ AdamW(lr 3e-4, betas .9/.999, eps 1e-8, wd --wd) step.  Data: seeded random
tokens, all batches generated before timing.  Timing excludes --warmup-steps.

FLOPs/token (nanoGPT estimate_mfu convention):
  flops_per_token = 6*N + 12*L*T*d
  N = all trainable params except the positional embedding (wpe is a lookup; the
      tied wte IS counted because it is used as the lm-head matmul).
  The attention term counts the full TxT score/value matmuls (no causal halving).
achieved GFLOP/s = flops_per_token * B*T / median_step_seconds / 1e9.

Threads: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are set to --threads (BLAS: --blas-threads) before
torch is imported (Debian torch calls OpenBLAS through libblas.so.3, and
torch.set_num_threads does not control OpenBLAS's own pthread pool), plus
torch.set_num_threads(threads).
foreign_cpu_cores = average number of cores busy with OTHER processes during the
timed window (/proc/stat busy minus own CPU time); > ~0.1 means the run was disturbed.
Output: one JSON object on stdout.

Sampling (--sample N): instead of training, generate N tokens after a one-token prompt for each
of the B rows, with a KV cache (each layer keeps the keys and values of the tokens so far and
each new token attends to them), drawing from softmax(logits) with torch.multinomial, under
torch.no_grad() in eval mode; N <= T - 1, so the cache never slides. Reported: the median over
--steps timed generations of tokens/s (B * N tokens per generation). bench/bench_sample.cpp
runs the same with scratchformer's sampler (nn/sampling.h).

NOTE (2-vCPU box): with --threads 2 the default libgomp spin-wait fights OpenBLAS's
own pthreads; export OMP_WAIT_POLICY=PASSIVE for ~2x faster small/medium steps
(small: ~153 vs ~340 ms/step).  Report both; PASSIVE is the fair "tuned" anchor.
"""
import argparse
import json
import math
import os
import resource
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--vocab", type=int, default=65)
ap.add_argument("--d", type=int, default=128)
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--heads", type=int, default=4)
ap.add_argument("--T", type=int, default=128)
ap.add_argument("--B", type=int, default=16)
ap.add_argument("--steps", type=int, default=50, help="timed steps")
ap.add_argument("--warmup-steps", type=int, default=5)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--blas-threads", type=int, default=None,
                help="OpenBLAS pthread pool size (default: = --threads)")
ap.add_argument("--seed", type=int, default=1337)
ap.add_argument("--lr", type=float, default=3e-4)
ap.add_argument("--wd", type=float, default=0.0, help="AdamW weight decay")
ap.add_argument("--sdpa", action="store_true", help="use F.scaled_dot_product_attention if available")
ap.add_argument("--untied", action="store_true", help="separate lm head (default: tied, like GPT-2)")
ap.add_argument("--label", type=str, default="")
ap.add_argument("--sample", type=int, default=0, help="time generating this many tokens with a KV cache instead of training")
args = ap.parse_args()

# must happen before torch (and its OpenBLAS / libgomp) are loaded
os.environ["OMP_NUM_THREADS"] = str(args.threads)
if args.blas_threads is None:
    args.blas_threads = args.threads
os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(args.threads)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass


def _openblas_threads():
    """Best effort: also set/query OpenBLAS's thread count via ctypes."""
    import ctypes
    import ctypes.util
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas") or ""):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_set_num_threads(args.blas_threads)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_num_threads(), lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None, None


blas_threads, blas_core = _openblas_threads()
HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")
USE_SDPA = bool(args.sdpa and HAVE_SDPA)


class CausalSelfAttention(nn.Module):
    def __init__(self, d, h, T):
        super().__init__()
        assert d % h == 0
        self.h, self.dk = h, d // h
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T))

    def forward(self, x, cache=None):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.h, self.dk).transpose(1, 2)  # (B,h,T,dk)
        k = k.view(B, T, self.h, self.dk).transpose(1, 2)
        v = v.view(B, T, self.h, self.dk).transpose(1, 2)
        if cache is not None:  # one new token (T == 1): attend to every cached key, no mask needed
            assert T == 1
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
            att = F.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.dk)), dim=-1)
            return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
        if USE_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.dk))
            att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v  # (B,h,T,dk)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, d, h, T):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, h, T)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, V, d, L, h, T, tied=True):
        super().__init__()
        self.wte = nn.Embedding(V, d)
        self.wpe = nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Block(d, h, T) for _ in range(L)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, V, bias=False)
        if tied:
            self.lm_head.weight = self.wte.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, idx, targets):
        B, T = idx.shape
        pos = torch.arange(T, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, n, gen):
        """idx (B, 1) -> (B, 1 + n): n tokens drawn one at a time with a KV cache per layer."""
        caches = [dict() for _ in self.blocks]
        out = [idx]
        for pos in range(n):
            x = self.wte(out[-1]) + self.wpe(torch.tensor([pos]))
            for blk, cache in zip(self.blocks, caches):
                x = blk(x, cache)
            probs = F.softmax(self.lm_head(self.ln_f(x))[:, -1, :], dim=-1)
            out.append(torch.multinomial(probs, 1, generator=gen))
        return torch.cat(out, dim=1)


def sample_main():
    torch.manual_seed(args.seed)
    V, d, L, H, T, B, n = args.vocab, args.d, args.layers, args.heads, args.T, args.B, args.sample
    if not 1 <= n <= T - 1:
        sys.exit("error: --sample must be in [1, T - 1]")
    model = GPT(V, d, L, H, T, tied=not args.untied)
    model.eval()
    gen = torch.Generator().manual_seed(args.seed + 1)
    prompt = torch.randint(0, V, (B, 1), generator=gen, dtype=torch.long)
    times = []
    snap0 = None
    for i in range(args.warmup_steps + args.steps):
        if i == args.warmup_steps:
            snap0 = _cpu_snapshot()
        t0 = time.perf_counter()
        model.generate(prompt, n, gen)
        if i >= args.warmup_steps:
            times.append(time.perf_counter() - t0)
    snap1 = _cpu_snapshot()
    foreign = ((snap1[1] - snap0[1]) - (snap1[2] - snap0[2])) / (snap1[0] - snap0[0])
    st = sorted(times)
    med = st[len(st) // 2] if len(st) % 2 else 0.5 * (st[len(st) // 2 - 1] + st[len(st) // 2])
    print(json.dumps({"framework": "pytorch-%s" % torch.__version__, "threads": args.threads,
                      "config": dict(vocab=V, d=d, layers=L, heads=H, T=T, B=B), "new_tokens": n,
                      "timed_generations": len(st), "median_ms": med * 1e3, "tokens_per_s": B * n / med,
                      "foreign_cpu_cores": round(foreign, 3)}))


def _cpu_snapshot():
    """(wall s, machine busy cpu-s from /proc/stat, own process cpu-s) -- to detect
    other processes competing for the cores during the timed window."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    t = os.times()
    return time.perf_counter(), busy, t.user + t.system


def main():
    torch.manual_seed(args.seed)
    V, d, L, H, T, B = args.vocab, args.d, args.layers, args.heads, args.T, args.B
    model = GPT(V, d, L, H, T, tied=not args.untied)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())  # tied weight counted once
    n_flop_params = n_params - model.wpe.weight.numel()
    flops_per_token = 6 * n_flop_params + 12 * L * T * d
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=args.wd)

    total = args.warmup_steps + args.steps
    g = torch.Generator().manual_seed(args.seed + 1)
    data = torch.randint(0, V, (total, B, T + 1), generator=g, dtype=torch.long)
    xs = data[:, :, :T].contiguous()
    ys = data[:, :, 1:].contiguous()

    times, losses = [], []
    snap0 = None
    for step in range(total):
        if step == args.warmup_steps:
            snap0 = _cpu_snapshot()
        x, y = xs[step], ys[step]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t1 = time.perf_counter()
        losses.append(loss.item())  # outside the timed region (forward already done)
        if step >= args.warmup_steps:
            times.append(t1 - t0)

    snap1 = _cpu_snapshot()
    wall = snap1[0] - snap0[0]
    foreign = ((snap1[1] - snap0[1]) - (snap1[2] - snap0[2])) / wall
    st = sorted(times)
    n = len(st)
    med = st[n // 2] if n % 2 else 0.5 * (st[n // 2 - 1] + st[n // 2])
    tok = B * T
    out = {
        "label": args.label,
        "framework": "pytorch-%s" % torch.__version__,
        "threads": args.threads,
        "openblas_threads": blas_threads,
        "openblas_core": blas_core,
        "torch_num_threads": torch.get_num_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "config": dict(vocab=V, d=d, layers=L, heads=H, T=T, B=B, tied=not args.untied),
        "sdpa_requested": args.sdpa, "sdpa_available": HAVE_SDPA, "sdpa_used": USE_SDPA,
        "warmup_steps": args.warmup_steps, "timed_steps": n,
        "median_step_ms": med * 1e3,
        "mean_step_ms": sum(st) / n * 1e3,
        "min_step_ms": st[0] * 1e3,
        "p90_step_ms": st[min(n - 1, int(0.9 * n))] * 1e3,
        "tokens_per_s": tok / med,
        "params": n_params,
        "params_for_flops": n_flop_params,
        "flops_per_token": flops_per_token,
        "flops_formula": "6*N + 12*L*T*d, N = params excluding wpe (tied wte counted once)",
        "gflop_per_s": flops_per_token * tok / med / 1e9,
        "foreign_cpu_cores": round(foreign, 3),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "loss_first": losses[0], "loss_last": losses[-1],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    sample_main() if args.sample else main()
