#!/usr/bin/python3
"""PyTorch DistributedDataParallel baseline for `accel run` (bench/ddp_bench/run.sh).

The same byte-level GPT-2 as executor/models/gpt2.cc (pre-norm blocks, Conv1D weights stored
[in, out], explicit causal softmax attention, GELU(tanh), tied head, N(0, 0.02) init with
0.02/sqrt(2L) for the c_proj weights), the same data (the text files under a path, read in sorted
order without following symlinks, skipping *.dat and non-UTF-8 files, one token per byte), the same
AdamW (decay only on >= 2-dim parameters), warmup + cosine schedule and global-norm clipping, and
the same layout: WORLD ranks on this machine, Gloo, torch.multiprocessing.spawn, DDP with 25 MiB
buckets, THREADS intra-op threads per rank.

Prints one JSON object on stdout: tokens_per_second (over the steps after --skip-steps, wall clock
between step completions on rank 0), first_step_seconds (script start to the end of the first
optimizer step on rank 0), first_step_unix_time (that moment, seconds since the epoch, so a caller
can measure from its own launch), final_loss, steps.
Run with Debian's /usr/bin/python3, which has python3-torch.
"""
import argparse
import resource
import json
import math
import os
import socket
import time

START = time.time()

import torch  # noqa: E402  (imported after START so the launch time includes it)
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def read_corpus(path):
    """Concatenated bytes of the text files under path (data/text_source.h rules)."""
    def is_text(name, data):
        if name.endswith(".dat") or b"\0" in data:
            return False
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    if os.path.isfile(path):
        with open(path, "rb") as f:
            return f.read()
    files = []
    for root, dirs, names in os.walk(path, followlinks=False):
        for n in names:
            p = os.path.join(root, n)
            if not os.path.islink(p) and os.path.isfile(p):
                files.append(p)
    out = bytearray()
    for p in sorted(files, key=lambda s: s.encode()):
        with open(p, "rb") as f:
            data = f.read()
        if is_text(p, data):
            out += data
    return bytes(out)


class Conv1D(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return torch.matmul(x, self.weight) + self.bias


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(h, eps=1e-5)
        self.c_attn = Conv1D(h, 3 * h)
        self.attn_c_proj = Conv1D(h, h)
        self.ln_2 = nn.LayerNorm(h, eps=1e-5)
        self.c_fc = Conv1D(h, 4 * h)
        self.mlp_c_proj = Conv1D(4 * h, h)

    def forward(self, x):
        b, t, h = x.shape
        d = h // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(h, -1)
        q, k, v = (y.view(b, t, self.heads, d).transpose(1, 2) for y in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        y = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).contiguous().view(b, t, h)
        x = x + self.attn_c_proj(y)
        return x + self.mlp_c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, vocab, positions, h, layers, heads, seed):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(positions, h)
        self.h = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h, eps=1e-5)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    p.normal_(0.0, 0.02 / math.sqrt(2 * layers), generator=g)
                elif p.dim() >= 2:
                    p.normal_(0.0, 0.02, generator=g)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(t))
        for block in self.h:
            x = block(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


def lr_at(step, a):
    if step < a.warmup_steps:
        return a.lr * (step + 1) / a.warmup_steps
    p = min(1.0, max(0.0, (step - a.warmup_steps) / max(1, a.steps - a.warmup_steps)))
    low = a.lr * a.min_lr_ratio
    return low + (a.lr - low) * (1 + math.cos(math.pi * p)) / 2


def worker(rank, a, port, corpus, queue):
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=a.world)
    model = GPT2(256, a.max_seq_len, a.hidden, a.layers, a.heads, a.seed)
    ddp = DDP(model, bucket_cap_mb=25)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    tokens = torch.frombuffer(bytearray(corpus), dtype=torch.uint8).to(torch.long)
    windows = (tokens.numel() - 1) // a.seq_len
    order = torch.randperm(windows, generator=torch.Generator().manual_seed(a.seed))
    mine = order[rank::a.world]
    cursor = 0
    done_times = []
    loss_value = float("nan")
    for step in range(a.steps):
        ids = mine[cursor:cursor + a.micro_batch]
        cursor += a.micro_batch
        if cursor + a.micro_batch > mine.numel():
            cursor = 0
        starts = ids * a.seq_len
        batch = torch.stack([tokens[s:s + a.seq_len + 1] for s in starts.tolist()])
        for group in opt.param_groups:
            group["lr"] = lr_at(step, a)
        logits = ddp(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 256).float(), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        loss_value = loss.item()
        done_times.append(time.time())
    if rank == 0:
        queue.put({"done_times": done_times, "final_loss": loss_value,
                   # Linux reports ru_maxrss in KiB.
                   "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--skip-steps", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=192)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--max-seq-len", type=int, default=256)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--micro-batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup-steps", type=int, default=30)
    ap.add_argument("--min-lr-ratio", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()

    corpus = read_corpus(a.data)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.start_processes(worker, args=(a, port, corpus, queue), nprocs=a.world, join=True,
                       start_method="spawn")
    r = queue.get()
    t = r["done_times"]
    k = min(a.skip_steps, len(t) - 2)
    tokens_per_step = a.micro_batch * a.world * a.seq_len
    print(json.dumps({
        "steps": len(t),
        "tokens_per_second": tokens_per_step * (len(t) - 1 - k) / (t[-1] - t[k]),
        "first_step_seconds": t[0] - START,
        "first_step_unix_time": t[0],
        "final_loss": r["final_loss"],
        "peak_rss_bytes": r["peak_rss_bytes"],
    }))


if __name__ == "__main__":
    main()
