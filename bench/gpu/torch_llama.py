#!/usr/bin/env python3
"""Baselines for bench/gpu/throughput.sh: one Llama training step in PyTorch eager and in Hugging
Face transformers' LlamaForCausalLM, with the model, batch and precision accel runs.

  python3 bench/gpu/torch_llama.py --impl eager|hf --micro-batch B --seq-len S [--steps N]
      [--warmup W] [--precision amp|bf16] [--dims tinyllama]

Precision `amp`: fp32 parameters, bf16 autocast, fp32 AdamW (fused) -- what accel runs for
precision {params: fp32, compute: bf16}. `bf16`: bf16 parameters with fp32 master weights kept
by the script (fp32 AdamW over them) -- accel's {params: bf16, compute: bf16}. Attention is
scaled_dot_product_attention(is_causal=True) in both implementations (flash on H100), the loss
an fp32 cross-entropy over the logits. Prints one JSON line: tokens/s over the timed steps (CUDA
events around each step, after warmup), peak allocated and reserved bytes, and the last loss.
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

# TinyLlama-1.1B (config.json of TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T).
DIMS = {
    "tinyllama": dict(hidden=2048, layers=22, heads=32, kv_heads=4, ffn=5632, vocab=32000,
                      rope_theta=10000.0, eps=1e-5),
}


class RMSNorm(nn.Module):
    def __init__(self, h, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * y.to(x.dtype)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        h, self.heads, self.kv = d["hidden"], d["heads"], d["kv_heads"]
        self.hd = h // self.heads
        self.input_layernorm = RMSNorm(h, d["eps"])
        self.q_proj = nn.Linear(h, h, bias=False)
        self.k_proj = nn.Linear(h, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(h, self.kv * self.hd, bias=False)
        self.o_proj = nn.Linear(h, h, bias=False)
        self.post_attention_layernorm = RMSNorm(h, d["eps"])
        self.gate_proj = nn.Linear(h, d["ffn"], bias=False)
        self.up_proj = nn.Linear(h, d["ffn"], bias=False)
        self.down_proj = nn.Linear(d["ffn"], h, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        n = self.input_layernorm(x)
        q = self.q_proj(n).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(n).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(n).view(b, t, self.kv, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv
        k = k.repeat_interleave(rep, 1)
        v = v.repeat_interleave(rep, 1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(y.transpose(1, 2).reshape(b, t, -1))
        m = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(m)) * self.up_proj(m))


class EagerLlama(nn.Module):
    def __init__(self, d, max_seq):
        super().__init__()
        self.embed_tokens = nn.Embedding(d["vocab"], d["hidden"])
        self.layers = nn.ModuleList(Block(d) for _ in range(d["layers"]))
        self.norm = RMSNorm(d["hidden"], d["eps"])
        self.lm_head = nn.Linear(d["hidden"], d["vocab"], bias=False)
        hd = d["hidden"] // d["heads"]
        inv = 1.0 / (d["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
        f = torch.outer(torch.arange(max_seq).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        self.register_buffer("cos", emb.cos()[None, None], persistent=False)
        self.register_buffer("sin", emb.sin()[None, None], persistent=False)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.embed_tokens(tokens)
        cos, sin = self.cos[:, :, :t].to(x.dtype), self.sin[:, :, :t].to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


def build(impl, d, seq):
    if impl == "eager":
        model = EagerLlama(d, seq)
        for name, p in model.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        return model
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                      num_attention_heads=d["heads"], num_key_value_heads=d["kv_heads"],
                      intermediate_size=d["ffn"], vocab_size=d["vocab"],
                      max_position_embeddings=seq, rope_theta=d["rope_theta"],
                      rms_norm_eps=d["eps"], tie_word_embeddings=False)
    cfg._attn_implementation = "sdpa"
    return LlamaForCausalLM(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["eager", "hf"], required=True)
    ap.add_argument("--dims", default="tinyllama", choices=sorted(DIMS))
    ap.add_argument("--micro-batch", type=int, required=True)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--precision", choices=["amp", "bf16"], default="amp")
    args = ap.parse_args()
    d = DIMS[args.dims]
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = build(args.impl, d, args.seq_len).to(dev)
    if args.precision == "bf16":
        master = [p.detach().clone().float() for p in model.parameters()]
        model = model.to(torch.bfloat16)
        opt = torch.optim.AdamW(master, lr=1e-4, weight_decay=0.1, fused=True)
    else:
        master = None
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    params = list(model.parameters())
    tokens = torch.randint(0, d["vocab"], (args.micro_batch, args.seq_len + 1), device=dev)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "amp"):
            out = model(x)
            logits = out.logits if hasattr(out, "logits") else out
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        if master is not None:
            for m, p in zip(master, params):
                m.grad = p.grad.float()
                p.grad = None
        torch.nn.utils.clip_grad_norm_(master if master is not None else params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if master is not None:
            with torch.no_grad():
                for m, p in zip(master, params):
                    p.copy_(m)
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    tokens_per_step = args.micro_batch * args.seq_len
    mean = sum(times) / len(times)
    print(json.dumps({
        "impl": {"eager": "pytorch-eager", "hf": "hf-transformers"}[args.impl],
        "precision": args.precision, "micro_batch": args.micro_batch, "seq_len": args.seq_len,
        "params": sum(p.numel() for p in params), "step_seconds": mean,
        "tokens_per_second": tokens_per_step / mean, "loss": loss.item(),
        "peak_allocated": torch.cuda.max_memory_allocated(),
        "peak_reserved": torch.cuda.max_memory_reserved(),
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
