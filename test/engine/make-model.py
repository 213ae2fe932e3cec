"""Builds a tiny Qwen3 with real (random) weights that vLLM's CPU engine loads and runs, offline.

The embedded model (models/hub/models--dynamo-dev--tiny, test/dynamo/make-model.py) has no weights
and head_dim 16, which vLLM's CPU attention does not support (vllm/v1/attention/backends/cpu_attn.py
lists 32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512). This one keeps the embedded tokenizer and
chat template and writes a config with head_dim 32 plus a model.safetensors of seeded random bf16
weights: 2 layers, hidden 128, 4 heads, 2 KV heads (~0.5 M parameters, ~1 MB). Its answers are
nonsense; its process tree, KV cache, events and failures are the real engine's.

usage: python make-model.py FOLDER [--head-dim N]
  --head-dim 16 builds the same model with a head size the CPU backend lacks (its real failure).
"""
import argparse
import json
import os
import shutil

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
EMBEDDED = os.path.join(HERE, "..", "..", "models", "hub", "models--dynamo-dev--tiny", "snapshots", "0" * 40)


def build(folder, head_dim):
    os.makedirs(folder, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copyfile(os.path.join(EMBEDDED, name), os.path.join(folder, name))
    with open(os.path.join(EMBEDDED, "config.json")) as f:
        config = json.load(f)
    hidden, heads, kv_heads, layers, inter = 128, 4, 2, 2, 256
    config.update({
        "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "tie_word_embeddings": True,
    })
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    vocab = config["vocab_size"]
    g = torch.Generator().manual_seed(0)
    rnd = lambda *shape: (torch.randn(*shape, generator=g) * 0.02).to(torch.bfloat16)
    ones = lambda n: torch.ones(n, dtype=torch.bfloat16)
    w = {"model.embed_tokens.weight": rnd(vocab, hidden), "model.norm.weight": ones(hidden)}
    for i in range(layers):
        p = f"model.layers.{i}."
        w.update({
            p + "input_layernorm.weight": ones(hidden),
            p + "post_attention_layernorm.weight": ones(hidden),
            p + "self_attn.q_proj.weight": rnd(heads * head_dim, hidden),
            p + "self_attn.k_proj.weight": rnd(kv_heads * head_dim, hidden),
            p + "self_attn.v_proj.weight": rnd(kv_heads * head_dim, hidden),
            p + "self_attn.o_proj.weight": rnd(hidden, heads * head_dim),
            p + "self_attn.q_norm.weight": ones(head_dim),
            p + "self_attn.k_norm.weight": ones(head_dim),
            p + "mlp.gate_proj.weight": rnd(inter, hidden),
            p + "mlp.up_proj.weight": rnd(inter, hidden),
            p + "mlp.down_proj.weight": rnd(hidden, inter),
        })
    save_file(w, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    return sum(t.numel() for t in w.values())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("--head-dim", type=int, default=32)
    a = p.parse_args()
    params = build(a.folder, a.head_dim)
    size = os.path.getsize(os.path.join(a.folder, "model.safetensors"))
    print(json.dumps({"folder": os.path.abspath(a.folder), "parameters": params, "bytes": size, "headDim": a.head_dim}))


if __name__ == "__main__":
    main()
