#!/usr/bin/python3
# A Llama-shaped HF checkpoint of random bf16 weights (Llama-2-7B widths, 2 layers, vocab 4096).
import json, struct, sys, torch
h, heads, kv, ffn, layers, vocab = 4096, 32, 8, 11008, 2, 4096
hd = h // heads
shapes = {"model.embed_tokens.weight": [vocab, h]}
for i in range(layers):
    p = f"model.layers.{i}."
    shapes.update({p + "self_attn.q_proj.weight": [h, h], p + "self_attn.k_proj.weight": [kv * hd, h],
                   p + "self_attn.v_proj.weight": [kv * hd, h], p + "self_attn.o_proj.weight": [h, h],
                   p + "mlp.gate_proj.weight": [ffn, h], p + "mlp.up_proj.weight": [ffn, h],
                   p + "mlp.down_proj.weight": [h, ffn], p + "input_layernorm.weight": [h],
                   p + "post_attention_layernorm.weight": [h]})
shapes["model.norm.weight"] = [h]
shapes["lm_head.weight"] = [vocab, h]
header, offset = {}, 0
for name, shape in shapes.items():
    n = 1
    for d in shape: n *= d
    header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + 2 * n]}
    offset += 2 * n
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
g = torch.Generator().manual_seed(0)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(text))); f.write(text)
    for name, shape in shapes.items():
        t = (torch.randn(shape, generator=g) * 0.02).to(torch.bfloat16)
        f.write(t.view(torch.int16).numpy().tobytes())
print(offset, "bytes of tensors")
