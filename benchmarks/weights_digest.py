"""Cost of naming a model by its weights (:func:`pelt.encoding.models.weights_digest`) at real model sizes.

Builds a randomly initialised RoBERTa of the given size (default: large, 355M parameters, 1.4 GB
in fp32; no download) and times the digest of its fp32 and bf16 copies (``--repeats`` each, after
one warm-up), and, for comparison, sha256 and blake2b over the raw fp32 bytes: the floor that any
digest of the weights pays.

    python benchmarks/weights_digest.py --size large --out results/benchmarks/weights_digest.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time

import torch
from transformers import RobertaConfig, RobertaForMaskedLM

from pelt.encoding.models import weights_digest

SIZES = {"base": (768, 12, 3072), "large": (1024, 24, 4096)}


def best(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default="large")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    hidden, layers, ffn = SIZES[args.size]
    config = RobertaConfig(hidden_size=hidden, num_hidden_layers=layers, intermediate_size=ffn, num_attention_heads=16)
    model = RobertaForMaskedLM(config).eval()
    n_bytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    raw = [t.contiguous().view(-1).view(torch.uint8).numpy() for _, t in sorted(model.state_dict().items())]

    def hash_raw(name: str) -> None:
        digest = hashlib.new(name)
        for array in raw:
            digest.update(array)

    result = {
        "size": args.size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "state_dict_fp32_mb": n_bytes / 2**20,
        "digest_fp32_s": best(lambda: weights_digest(model), args.repeats),
        "sha256_raw_fp32_s": best(lambda: hash_raw("sha256"), args.repeats),
        "blake2b_raw_fp32_s": best(lambda: hash_raw("blake2b"), args.repeats),
    }
    model = model.to(torch.bfloat16)
    result["digest_bf16_s"] = best(lambda: weights_digest(model), args.repeats)
    result.update(torch=torch.__version__, python=platform.python_version(), cpus=os.cpu_count())
    result["load_average"] = os.getloadavg()
    print(json.dumps(result, indent=2))
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
