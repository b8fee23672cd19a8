#!/usr/bin/env python3
"""An independent GPT-2 forward pass (Radford et al. 2019; the Hugging Face GPT2LMHeadModel layout)
in plain PyTorch, for the executor's pretrained-weights test: reads a model.safetensors with the
standard library and numpy (Debian's python3-torch 1.13 has no safetensors package), runs the
tokens through it in fp32 and writes the logits.

  gpt2_reference.py MODEL.safetensors TOKENS.bin LOGITS.bin HEADS

TOKENS.bin: int64 [batch, seq] with an int64 header (batch, seq); LOGITS.bin: float32
[batch, seq, vocab], row-major. Names may carry the "transformer." prefix or not.
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


def main():
    model, tokens_path, logits_path, heads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    raw = np.fromfile(tokens_path, dtype=np.int64)
    tokens = torch.from_numpy(raw[2:].reshape(int(raw[0]), int(raw[1])).copy())
    with torch.no_grad():
        logits = forward(read_safetensors(model), tokens, heads)
    logits.numpy().astype(np.float32).tofile(logits_path)


if __name__ == "__main__":
    main()
