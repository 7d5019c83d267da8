#!/usr/bin/env python3
"""PyTorch eager Hugging Face LlamaForCausalLM with random weights, in the shapes, dtype and batch
sizes of `flinfer bench-model --backend cuda`: decode tokens/s per batch size (each sequence its
own random prompt, greedy, timed steps after an untimed prefill) and prefill tokens/s (requests x
prompt tokens in one forward), plus the device's measured limits: a device-to-device copy's
bandwidth (bytes read and written) and a large bf16 matrix product's throughput. Prints JSON."""
import argparse
import json
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

SHAPES = {
    "llama-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                     num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                     tie_word_embeddings=True),
    "llama-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                     num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                     tie_word_embeddings=False),
}


def sync_time(fn, repeat=1):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / repeat


def device_limits():
    n = 1 << 30  # bytes per buffer
    a = torch.empty(n // 2, dtype=torch.bfloat16, device="cuda").uniform_()
    b = torch.empty_like(a)
    b.copy_(a)
    t = sync_time(lambda: b.copy_(a), 20)
    copy_gbps = 2 * n / t / 1e9
    m = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    m @ k
    t = sync_time(lambda: m @ k, 20)
    tflops = 2 * 8192 ** 3 / t / 1e12
    del a, b, m, k
    torch.cuda.empty_cache()
    return copy_gbps, tflops


def build(shape):
    cfg = LlamaConfig(**SHAPES[shape], max_position_embeddings=8192, rope_theta=500000.0,
                      rms_norm_eps=1e-5)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    torch.set_default_dtype(torch.float32)
    return model.eval()


@torch.inference_mode()
def decode(model, vocab, batch, prompt, steps, min_seconds):
    tokens = 0
    seconds = 0.0
    while seconds < min_seconds or tokens == 0:
        ids = torch.randint(3, vocab, (batch, prompt), device="cuda")
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            out = model(input_ids=nxt, past_key_values=past, use_cache=True, logits_to_keep=1)
            past = out.past_key_values
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        seconds += time.perf_counter() - t0
        tokens += steps * batch
        del past, out
    return tokens / seconds


@torch.inference_mode()
def prefill(model, vocab, requests, prompt, repeats=3):
    ids = torch.randint(3, vocab, (requests, prompt), device="cuda")
    model(input_ids=ids, logits_to_keep=1)
    t = sync_time(lambda: model(input_ids=ids, logits_to_keep=1), repeats)
    return requests * prompt / t


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--models", default="llama-1b,llama-8b")
    p.add_argument("--batch-sizes", default="1,16,64,256")
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--decode-steps", type=int, default=32)
    p.add_argument("--prefill-requests", type=int, default=4)
    p.add_argument("--seconds", type=float, default=3.0)
    a = p.parse_args()
    copy_gbps, tflops = device_limits()
    root = {"framework": f"PyTorch {torch.__version__} eager, transformers LlamaForCausalLM",
            "device": torch.cuda.get_device_name(0), "dtype": "bf16",
            "measured_copy_gbps": round(copy_gbps, 1), "measured_bf16_matmul_tflops": round(tflops, 1),
            "sampling": "greedy (argmax of the last position's logits)", "models": []}
    for name in a.models.split(","):
        model = build(name)
        vocab = SHAPES[name]["vocab_size"]
        decode(model, vocab, 4, a.prompt_len, a.decode_steps, 0.5)  # warm-up
        rows = []
        for b in [int(x) for x in a.batch_sizes.split(",")]:
            tps = decode(model, vocab, b, a.prompt_len, a.decode_steps, a.seconds)
            print(f"  {name} decode batch {b}: {tps:.1f} tokens/s", flush=True)
            rows.append({"batch": b, "prompts": "own", "tokens_per_s": round(tps, 2)})
        pre = prefill(model, vocab, a.prefill_requests, a.prompt_len)
        print(f"  {name} prefill {a.prefill_requests} x {a.prompt_len}: {pre:.1f} tokens/s", flush=True)
        root["models"].append({"model": name, "decode": rows,
                               "prefill": {"requests": a.prefill_requests, "prompt_len": a.prompt_len,
                                           "tokens_per_s": round(pre, 2)}})
        del model
        torch.cuda.empty_cache()
    print(json.dumps(root, indent=2))


if __name__ == "__main__":
    main()
