#!/usr/bin/env python3
"""Independent forward passes of GPT-2 (Radford et al. 2019; Hugging Face GPT2LMHeadModel) and the
Llama family (Touvron et al. 2023; LlamaForCausalLM: RMSNorm, rotary positions, grouped-query
attention, SwiGLU, optional q/k/v biases as Qwen2, tied or untied head; Qwen3's explicit head
width and per-head q/k RMSNorm, transformers' Qwen3Attention, when the file has
self_attn.q_norm.weight; Phi-3's fused qkv_proj and gate_up_proj, transformers' Phi3Attention and
Phi3MLP, split here as they do; and with a VARIANT.json, OLMo 2's post-norms and full-width q/k
norms, transformers' Olmo2DecoderLayer and Olmo2Attention, or Gemma 2's / Gemma 3 text's four
norms computing x*(1 + w) in fp32, embeddings times sqrt(h), GeGLU, scores scaled by
query_pre_attn_scalar^-0.5, soft-capped and windowed, final logits soft-capped, Gemma 3's
per-head q/k norms and local RoPE base, transformers' Gemma2/Gemma3 DecoderLayer, Attention,
RMSNorm, Model and ForCausalLM) in plain PyTorch, written
from the papers and Hugging Face's modeling code rather than from accel's, for the executor's
pretrained-weights test. Reads a model.safetensors with the standard library and numpy (Debian's
python3-torch 1.13 has no safetensors package), runs the tokens through it in fp32 and writes the
logits.

  hf_reference.py gpt2 MODEL.safetensors TOKENS.bin LOGITS.bin HEADS
  hf_reference.py llama MODEL.safetensors TOKENS.bin LOGITS.bin HEADS KV_HEADS EPS THETA [HEAD_DIM [VARIANT.json]]

VARIANT.json: {"norms": "post" (OLMo 2) or "pre_and_post" (Gemma), "unit_offset": bool,
"embedding_scale": float (0: none), "gelu_tanh": bool, "query_pre_attn_scalar": float (0: head_dim),
"attn_softcap": float, "final_softcap": float (0: none), "sliding_window": int,
"sliding_layers": [int], "rope_local_theta": float (0: THETA), "qk_norm_full_width": bool}.

TOKENS.bin: int64 [batch, seq] with an int64 header (batch, seq); LOGITS.bin: float32
[batch, seq, vocab], row-major. GPT-2 names may carry the "transformer." prefix or not.
"""
import json
import math
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
        out[name.removeprefix("transformer.")] = torch.from_numpy(array.astype(np.float32))
    return out


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def forward(w, tokens, heads):
    b, t = tokens.shape
    x = w["wte.weight"][tokens] + w["wpe.weight"][:t]
    layer = 0
    while f"h.{layer}.ln_1.weight" in w:
        p = f"h.{layer}."
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: [in, out]
        q, k, v = qkv.split(x.shape[-1], dim=-1)
        split = lambda y: y.view(b, t, heads, -1).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        layer += 1
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].t()  # tied head


def rms_norm(x, w, eps, unit_offset=False):
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed * (1.0 + w) if unit_offset else w * normed  # Gemma2RMSNorm: x*(1 + w)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary_tables(theta, d, t):
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.outer(torch.arange(t, dtype=torch.float32), inv_freq.float())
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def llama_forward(w, tokens, heads, kv_heads, eps, theta, head_dim=0, variant=None):
    v_ = variant or {}
    norms = v_.get("norms", "pre")
    offset = v_.get("unit_offset", False)
    norm = lambda x, name: rms_norm(x, w[name], eps, offset)
    b, t = tokens.shape
    x = w["model.embed_tokens.weight"][tokens]
    if v_.get("embedding_scale", 0):  # Gemma: the normalizer, in the embeddings' dtype
        x = x * torch.tensor(v_["embedding_scale"], dtype=x.dtype)
    d = head_dim or x.shape[-1] // heads
    cos_global, sin_global = rotary_tables(theta, d, t)
    cos_local, sin_local = rotary_tables(v_.get("rope_local_theta", 0) or theta, d, t)
    scale = v_.get("query_pre_attn_scalar", 0) ** -0.5 if v_.get("query_pre_attn_scalar", 0) else 1 / math.sqrt(d)
    linear = lambda y, p: y @ w[p + ".weight"].t() + (w[p + ".bias"] if p + ".bias" in w else 0)
    layer = 0
    while f"model.layers.{layer}.self_attn.o_proj.weight" in w:
        p = f"model.layers.{layer}."
        sliding = layer in v_.get("sliding_layers", [])
        cos, sin = (cos_local, sin_local) if sliding else (cos_global, sin_global)
        n = x if norms == "post" else norm(x, p + "input_layernorm.weight")
        q = linear(n, p + "self_attn.q_proj")
        k = linear(n, p + "self_attn.k_proj")
        if v_.get("qk_norm_full_width"):  # OLMo 2: over the whole projection, before the split
            q, k = norm(q, p + "self_attn.q_norm.weight"), norm(k, p + "self_attn.k_norm.weight")
        q, k = q.view(b, t, heads, d), k.view(b, t, kv_heads, d)
        if p + "self_attn.q_norm.weight" in w and not v_.get("qk_norm_full_width"):
            # Qwen3, Gemma 3: each head normalized before rotary
            q, k = norm(q, p + "self_attn.q_norm.weight"), norm(k, p + "self_attn.k_norm.weight")
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = linear(n, p + "self_attn.v_proj").view(b, t, kv_heads, d).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(heads // kv_heads, dim=1)
        v = v.repeat_interleave(heads // kv_heads, dim=1)
        scores = q @ k.transpose(-2, -1) * scale
        if v_.get("attn_softcap", 0):  # Gemma 2: before the mask
            scores = torch.tanh(scores / v_["attn_softcap"]) * v_["attn_softcap"]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        if sliding:  # transformers' sliding-window mask: key j hidden when j <= i - window
            mask = mask | torch.ones(t, t, dtype=torch.bool).tril(-v_["sliding_window"])
        scores = scores.masked_fill(mask, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        y = linear(y, p + "self_attn.o_proj")
        if norms != "pre":
            y = norm(y, p + "post_attention_layernorm.weight")
        x = x + y
        mlp_in = {"pre": "post_attention_layernorm", "pre_and_post": "pre_feedforward_layernorm"}.get(norms)
        m = norm(x, p + mlp_in + ".weight") if mlp_in else x
        gate = linear(m, p + "mlp.gate_proj")
        act = gelu_tanh(gate) if v_.get("gelu_tanh") else gate * torch.sigmoid(gate)
        y = linear(act * linear(m, p + "mlp.up_proj"), p + "mlp.down_proj")
        if norms != "pre":
            y = norm(y, p + "post_feedforward_layernorm.weight")
        x = x + y
        layer += 1
    x = norm(x, "model.norm.weight")
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    logits = x @ head.t()
    if v_.get("final_softcap", 0):  # Gemma 2: on the lm_head's output
        logits = torch.tanh(logits / v_["final_softcap"]) * v_["final_softcap"]
    return logits


def split_fused(w, q, kv):
    """Phi-3's qkv_proj rows are [q; k; v] and gate_up_proj's [gate; up] (Phi3Attention slices
    qkv at num_heads*head_dim and that plus num_kv_heads*head_dim; Phi3MLP chunks in 2)."""
    out = {}
    for name, t in w.items():
        if name.endswith("self_attn.qkv_proj.weight"):
            base = name[: -len("qkv_proj.weight")]
            out[base + "q_proj.weight"], out[base + "k_proj.weight"], out[base + "v_proj.weight"] = t.split([q, kv, kv])
        elif name.endswith("mlp.gate_up_proj.weight"):
            base = name[: -len("gate_up_proj.weight")]
            out[base + "gate_proj.weight"], out[base + "up_proj.weight"] = t.chunk(2, dim=0)
        else:
            out[name] = t
    return out


def main():
    arch, model, tokens_path, logits_path = sys.argv[1:5]
    heads = int(sys.argv[5])
    raw = np.fromfile(tokens_path, dtype=np.int64)
    tokens = torch.from_numpy(raw[2:].reshape(int(raw[0]), int(raw[1])).copy())
    weights = read_safetensors(model)
    with torch.no_grad():
        if arch == "gpt2":
            logits = forward(weights, tokens, heads)
        else:
            kv_heads, eps, theta = int(sys.argv[6]), float(sys.argv[7]), float(sys.argv[8])
            head_dim = int(sys.argv[9]) if len(sys.argv) > 9 else 0
            variant = json.load(open(sys.argv[10])) if len(sys.argv) > 10 else None
            d = head_dim or weights["model.embed_tokens.weight"].shape[1] // heads
            weights = split_fused(weights, heads * d, kv_heads * d)
            logits = llama_forward(weights, tokens, heads, kv_heads, eps, theta, head_dim, variant)
    logits.numpy().astype(np.float32).tofile(logits_path)


if __name__ == "__main__":
    main()
