"""One decoder layer of a Llama-style model, in bf16, run with the rs2gpu kernels of src/lib.rs and checked
against a reference on the same weights.

    python3 examples/llm/llm.py --shape small --backend cpu        # rustc's build, against numpy (CI runs this)
    python3 examples/llm/llm.py --backend cuda                     # Llama-2-7B's layer shapes, against PyTorch

It runs one decode step: the token at position `context - 1` attends to a key/value cache whose earlier
positions hold random keys and values (a prompt's, as far as the layer is concerned); then the prefill of
a prompt of `context` tokens, with causal attention over it. Weights and
activations are bf16, every sum is f32; each kernel rounds its outputs once to bf16, where PyTorch's
layer rounds after each of its operations. On cuda it also times both against PyTorch eager (and
`torch.compile` with --compile), with CUDA events, and reports the bytes the step must read (the weights
and the cache) as a fraction of the device's copy rate, and the prefill's TFLOP/s.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EPS = 1e-5          # RMSNorm's epsilon (Llama 2)
CHUNK = 128         # the positions of one part of the attention output (src/lib.rs)
ROPE_BASE = 10000.0


@dataclass(frozen=True)
class Shape:
    hidden: int
    heads: int
    mlp: int
    context: int    # the cache's positions, the new token's included

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SHAPES = {"llama-2-7b": Shape(hidden=4096, heads=32, mlp=11008, context=2048),
          "small": Shape(hidden=256, heads=2, mlp=688, context=64)}  # the kernels' HEAD_DIM is Llama's, 128
WEIGHTS = ("wq", "wk", "wv", "wo", "wg", "wu", "wd")


def bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def make_layer(shape: Shape, seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights with Llama's scale (each linear layer's rows of unit-variance inputs give outputs of
    unit variance), norm weights near 1, a cache of unit-variance keys and values, the new token's input
    `x`, a prompt of `context` tokens, and the rotary tables: host arrays, bf16 but for the f32 tables."""
    rng = np.random.default_rng(seed)
    d, f, c = shape.hidden, shape.mlp, shape.context

    def normal(count: int, scale: float = 1.0):
        return (rng.standard_normal(count, dtype=np.float32) * np.float32(scale)).astype(bf16())
    layer = {"x": normal(d), "prompt": normal(c * d), "attention_norm": (1 + normal(d, 0.1).astype(np.float32)).astype(bf16()),
             "mlp_norm": (1 + normal(d, 0.1).astype(np.float32)).astype(bf16()),
             "wq": normal(d * d, d ** -0.5), "wk": normal(d * d, d ** -0.5), "wv": normal(d * d, d ** -0.5),
             "wo": normal(d * d, d ** -0.5), "wg": normal(f * d, d ** -0.5), "wu": normal(f * d, d ** -0.5),
             "wd": normal(d * f, f ** -0.5), "keys": normal(c * d), "values": normal(c * d)}
    half = shape.head_dim // 2
    inverse = ROPE_BASE ** (-np.arange(half, dtype=np.float64) * 2 / shape.head_dim)
    angles = np.arange(c, dtype=np.float64)[:, None] * inverse[None, :]
    layer["cos"], layer["sin"] = np.cos(angles).astype(np.float32).ravel(), np.sin(angles).astype(np.float32).ravel()
    return layer


class Rs2gpuLayer:
    """The layer's prefill and decode step as calls of the kernels, on arrays of one library (`like` makes them from
    host arrays: numpy for the cpu backend, torch tensors on the GPU); scratch arrays are made once."""

    def __init__(self, kernels, layer: dict, shape: Shape, like, empty) -> None:
        self.k, self.shape = kernels, shape
        self.w = {name: like(value) for name, value in layer.items()}
        d, f, c, heads = shape.hidden, shape.mlp, shape.context, shape.heads
        self.scratch = {name: empty(n, kind) for name, n, kind in (
            ("h", d, "bf16"), ("q", d, "bf16"), ("k", d, "bf16"), ("v", d, "bf16"), ("q_turned", d, "bf16"),
            ("k_turned", d, "bf16"), ("scores", heads * c, "f32"), ("probs", heads * c, "f32"),
            ("parts", -(-c // CHUNK) * d, "f32"),
            ("mixed", d, "bf16"), ("o", d, "bf16"), ("gate", f, "bf16"), ("up", f, "bf16"),
            ("act", f, "bf16"), ("down", d, "bf16"))}

    def prefill(self, x, empty, mark=None) -> None:
        """The layer over a prompt of `context` tokens (`x`, its rows of the residual stream, updated in
        place), its keys and values written to the cache's first rows. `empty` makes scratch arrays."""
        k = self.k if mark is None else _Marked(self.k, mark)
        w, shape = self.w, self.shape
        d, f, heads, tokens = shape.hidden, shape.mlp, shape.heads, shape.context
        if not hasattr(self, "prompt_scratch"):
            self.prompt_scratch = {name: empty(n, kind) for name, n, kind in (
                ("h", tokens * d, "bf16"), ("q", tokens * d, "bf16"), ("k", tokens * d, "bf16"),
                ("v", tokens * d, "bf16"), ("q_turned", tokens * d, "bf16"), ("k_turned", tokens * d, "bf16"),
                ("scores", heads * tokens * tokens, "f32"), ("probs", heads * tokens * tokens, "bf16"),
                ("mixed", tokens * d, "bf16"), ("o", tokens * d, "bf16"), ("gate", tokens * f, "bf16"),
                ("up", tokens * f, "bf16"), ("act", tokens * f, "bf16"), ("down", tokens * d, "bf16"))}
        s = self.prompt_scratch
        k.rms_norm(s["h"], x, w["attention_norm"], d, EPS)
        k.linear(s["q"], s["h"], w["wq"], tokens, d, d)
        k.linear(s["k"], s["h"], w["wk"], tokens, d, d)
        k.linear(s["v"], s["h"], w["wv"], tokens, d, d)
        k.rotary(s["q_turned"], s["q"], w["cos"], w["sin"], 0, d)
        k.rotary(s["k_turned"], s["k"], w["cos"], w["sin"], 0, d)
        k.append(w["keys"], s["k_turned"], 0, d)
        k.append(w["values"], s["v"], 0, d)
        k.attention_scores(s["scores"], s["q_turned"], w["keys"], tokens, d)
        k.causal_softmax(s["probs"], s["scores"], tokens)
        k.attention_mix(s["mixed"], s["probs"], w["values"], tokens, d)
        k.linear(s["o"], s["mixed"], w["wo"], tokens, d, d)
        k.add_into(x, s["o"])
        k.rms_norm(s["h"], x, w["mlp_norm"], d, EPS)
        k.linear(s["gate"], s["h"], w["wg"], tokens, d, f)
        k.linear(s["up"], s["h"], w["wu"], tokens, d, f)
        k.swiglu(s["act"], s["gate"], s["up"])
        k.linear(s["down"], s["act"], w["wd"], tokens, f, d)
        k.add_into(x, s["down"])

    def decode(self, x, mark=None) -> None:
        """One decode step at position `context - 1`: `x` (the residual stream) is updated in place, the
        token's key and value enter the cache. `mark(name)`, if given, is called after each kernel."""
        k = self.k if mark is None else _Marked(self.k, mark)
        w, s, shape = self.w, self.scratch, self.shape
        d, position = shape.hidden, shape.context - 1
        k.rms_norm(s["h"], x, w["attention_norm"], d, EPS)
        k.matvec(s["q"], s["h"], w["wq"])
        k.matvec(s["k"], s["h"], w["wk"])
        k.matvec(s["v"], s["h"], w["wv"])
        k.rotary(s["q_turned"], s["q"], w["cos"], w["sin"], position, d)
        k.rotary(s["k_turned"], s["k"], w["cos"], w["sin"], position, d)
        k.append(w["keys"], s["k_turned"], position, d)
        k.append(w["values"], s["v"], position, d)
        length = position + 1
        k.decode_scores(s["scores"], s["q_turned"], w["keys"], length)
        k.softmax_rows(s["probs"], s["scores"], length)
        k.decode_mix_parts(s["parts"][:-(-length // CHUNK) * d], s["probs"], w["values"], length, d)
        k.decode_mix(s["mixed"], s["parts"][:-(-length // CHUNK) * d])
        k.matvec(s["o"], s["mixed"], w["wo"])
        k.add_into(x, s["o"])
        k.rms_norm(s["h"], x, w["mlp_norm"], d, EPS)
        k.matvec(s["gate"], s["h"], w["wg"])
        k.matvec(s["up"], s["h"], w["wu"])
        k.swiglu(s["act"], s["gate"], s["up"])
        k.matvec(s["down"], s["act"], w["wd"])
        k.add_into(x, s["down"])


class _Marked:
    """The kernels of a module, each call followed by `mark(kernel name)`."""

    def __init__(self, kernels, mark) -> None:
        self.kernels, self.mark = kernels, mark

    def __getattr__(self, name: str):
        kernel = getattr(self.kernels, name)

        def call(*args):
            kernel(*args)
            self.mark(name)
        return call


def numpy_decode(layer: dict, shape: Shape) -> np.ndarray:
    """The decode step in numpy: f32 (f64 for the sums) with the kernels' bf16 roundings, an independent
    reference for the cpu backend."""
    d, heads, head_dim, c = shape.hidden, shape.heads, shape.head_dim, shape.context
    b16 = bf16()

    def f(name):
        return layer[name].astype(np.float64)

    def rounded(v):
        return np.asarray(v, np.float32).astype(b16).astype(np.float64)

    def norm(x, weight):
        return rounded(x / np.sqrt(np.mean(x * x) + EPS) * weight)

    def linear(x, name, outputs):
        return rounded(f(name).reshape(outputs, -1) @ x)

    def rotary(v):
        half = head_dim // 2
        cos, sin = layer["cos"].reshape(c, half)[c - 1], layer["sin"].reshape(c, half)[c - 1]
        heads_of = v.reshape(heads, head_dim)
        first, second = heads_of[:, :half], heads_of[:, half:]
        return rounded(np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=1).ravel())
    x = f("x")
    h = norm(x, f("attention_norm"))
    q, k, v = rotary(linear(h, "wq", d)), rotary(linear(h, "wk", d)), linear(h, "wv", d)
    keys, values = f("keys").reshape(c, d).copy(), f("values").reshape(c, d).copy()
    keys[c - 1], values[c - 1] = k, v
    mixed = np.empty(d)
    for head in range(heads):
        part = slice(head * head_dim, (head + 1) * head_dim)
        scores = keys[:, part] @ q[part] / math.sqrt(head_dim)
        probs = np.exp(scores - scores.max())
        mixed[part] = rounded(values[:, part].T @ (probs / probs.sum()))
    x = rounded(x + linear(mixed, "wo", d))
    h = norm(x, f("mlp_norm"))
    gate, up = linear(h, "wg", shape.mlp), linear(h, "wu", shape.mlp)
    act = rounded(gate / (1 + np.exp(-gate)) * up)
    return rounded(x + linear(act, "wd", d))


def numpy_prefill(layer: dict, shape: Shape) -> np.ndarray:
    """The layer over the prompt in numpy, as `numpy_decode` computes a step: f64 sums, the kernels' bf16
    roundings."""
    d, heads, head_dim, tokens = shape.hidden, shape.heads, shape.head_dim, shape.context
    b16 = bf16()

    def rounded(v):
        return np.asarray(v, np.float32).astype(b16).astype(np.float64)

    def norm(x, weight):
        return rounded(x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS) * weight)

    def linear(x, name, outputs):
        return rounded(x @ layer[name].astype(np.float64).reshape(outputs, -1).T)

    def rotary(v):
        half = head_dim // 2
        cos, sin = (layer[name].reshape(-1, half)[:tokens, None, :] for name in ("cos", "sin"))
        heads_of = v.reshape(tokens, heads, head_dim)
        first, second = heads_of[..., :half], heads_of[..., half:]
        return rounded(np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=2)
                       .reshape(tokens, d))
    x = layer["prompt"].astype(np.float64).reshape(tokens, d)
    h = norm(x, layer["attention_norm"].astype(np.float64))
    q, k, v = rotary(linear(h, "wq", d)), rotary(linear(h, "wk", d)), linear(h, "wv", d)
    mixed = np.empty((tokens, d))
    causal = np.tril(np.ones((tokens, tokens), bool))
    for head in range(heads):
        part = slice(head * head_dim, (head + 1) * head_dim)
        scores = np.asarray(q[:, part] @ k[:, part].T / math.sqrt(head_dim), np.float32).astype(np.float64)
        scores = np.where(causal, scores, -np.inf)
        probs = np.exp(scores - scores.max(axis=1, keepdims=True))
        probs = rounded(probs / probs.sum(axis=1, keepdims=True))
        mixed[:, part] = rounded(probs @ v[:, part])
    x = rounded(x + linear(mixed, "wo", d))
    h = norm(x, layer["mlp_norm"].astype(np.float64))
    gate, up = linear(h, "wg", shape.mlp), linear(h, "wu", shape.mlp)
    act = rounded(gate / (1 + np.exp(-gate)) * up)
    return rounded(x + linear(act, "wd", d)).ravel()


def torch_prefill(torch, w: dict, shape: Shape):
    """PyTorch eager's layer over the prompt, as `torch_decode_step` writes a step; `w` from `torch_weights`."""
    import torch.nn.functional as F
    d, heads, head_dim, tokens = shape.hidden, shape.heads, shape.head_dim, shape.context

    def norm(x, weight):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(variance + EPS)).to(torch.bfloat16)

    def rotate(v):
        v = v.view(tokens, heads, head_dim)
        first, second = v[..., :head_dim // 2], v[..., head_dim // 2:]
        return (v * w["cos_rows"] + torch.cat((-second, first), dim=-1) * w["sin_rows"]).transpose(0, 1)

    def layer(x):
        h = norm(x, w["attention_norm"])
        q, k, v = F.linear(h, w["wq"]), F.linear(h, w["wk"]), F.linear(h, w["wv"])
        q, k = rotate(q), rotate(k)
        v = v.view(tokens, heads, head_dim).transpose(0, 1)
        mixed = F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), is_causal=True)
        x = x + F.linear(mixed[0].transpose(0, 1).reshape(tokens, d), w["wo"])
        h = norm(x, w["mlp_norm"])
        return x + F.linear(F.silu(F.linear(h, w["wg"])) * F.linear(h, w["wu"]), w["wd"])
    return layer


def torch_decode_step(torch, w: dict, shape: Shape):
    """PyTorch eager's decode step on bf16 tensors, as Llama's PyTorch code writes it (rounding after each
    operation); `w` holds the weights as (out, in) matrices and the cache as (heads, positions, head_dim)."""
    import torch.nn.functional as F
    d, heads, head_dim, c = shape.hidden, shape.heads, shape.head_dim, shape.context
    position = c - 1

    def norm(x, weight):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(variance + EPS)).to(torch.bfloat16)

    def rotate(v):
        v = v.view(heads, head_dim)
        first, second = v[:, :head_dim // 2], v[:, head_dim // 2:]
        turned = torch.cat((-second, first), dim=-1)
        return v * w["cos_row"] + turned * w["sin_row"]

    def step(x):
        h = norm(x, w["attention_norm"])
        q, k, v = F.linear(h, w["wq"]), F.linear(h, w["wk"]), F.linear(h, w["wv"])
        q, k = rotate(q), rotate(k)
        w["keys"][:, position] = k
        w["values"][:, position] = v.view(heads, head_dim)
        mixed = F.scaled_dot_product_attention(q.view(1, heads, 1, head_dim), w["keys"].unsqueeze(0),
                                               w["values"].unsqueeze(0))
        x = x + F.linear(mixed.reshape(d), w["wo"])
        h = norm(x, w["mlp_norm"])
        return x + F.linear(F.silu(F.linear(h, w["wg"])) * F.linear(h, w["wu"]), w["wd"])
    return step


def torch_weights(torch, layer: dict, shape: Shape) -> dict:
    d, heads, head_dim, c = shape.hidden, shape.heads, shape.head_dim, shape.context

    def tensor(v):
        return torch.from_numpy(np.ascontiguousarray(v).view(np.uint16).astype(np.int16)).view(torch.bfloat16).cuda() \
            if v.dtype == bf16() else torch.from_numpy(v).cuda()
    w = {name: tensor(layer[name]) for name in ("attention_norm", "mlp_norm")}
    for name in WEIGHTS:
        w[name] = tensor(layer[name]).view(-1, d if name != "wd" else shape.mlp)
    for name in ("keys", "values"):
        w[name] = tensor(layer[name]).view(c, heads, head_dim).permute(1, 0, 2).contiguous()
    half = head_dim // 2
    cos = torch.from_numpy(layer["cos"].reshape(c, half)[c - 1]).cuda()
    sin = torch.from_numpy(layer["sin"].reshape(c, half)[c - 1]).cuda()
    w["cos_row"] = torch.cat((cos, cos)).to(torch.bfloat16)
    w["sin_row"] = torch.cat((sin, sin)).to(torch.bfloat16)
    cos_rows = torch.from_numpy(layer["cos"].reshape(c, half)).cuda()
    sin_rows = torch.from_numpy(layer["sin"].reshape(c, half)).cuda()
    w["cos_rows"] = torch.cat((cos_rows, cos_rows), dim=1).to(torch.bfloat16).unsqueeze(1)
    w["sin_rows"] = torch.cat((sin_rows, sin_rows), dim=1).to(torch.bfloat16).unsqueeze(1)
    return w


def compare(got: np.ndarray, want: np.ndarray) -> dict:
    """The distance of two results: the largest difference and the rms of the differences, each relative
    to the rms of `want`."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.sqrt(np.mean(want * want)))
    return {"max_rel": float(np.max(np.abs(got - want)) / scale),
            "rms_rel": float(np.sqrt(np.mean((got - want) ** 2)) / scale)}


def run_cpu(shape: Shape) -> dict:
    import rs2gpu
    kernels = rs2gpu.load(HERE, backend="cpu")
    layer = make_layer(shape)
    empty = lambda n, kind: np.zeros(n, bf16() if kind == "bf16" else np.float32)  # noqa: E731
    state = Rs2gpuLayer(kernels, layer, shape, like=np.copy, empty=empty)
    x = layer["x"].copy()
    state.decode(x)
    decode = compare(x, numpy_decode(layer, shape))
    prompt = layer["prompt"].copy()
    state.prefill(prompt, empty)
    return {"shape": asdict(shape), "backend": "cpu", "against_numpy": decode,
            "prefill_against_numpy": compare(prompt, numpy_prefill(layer, shape))}


def time_cuda(torch, call, reps: int) -> float:
    """The median time of `call` in µs, from CUDA events around each of `reps` calls after a warm-up."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000)
    return float(np.median(times))


def marked_times(torch, run) -> dict[str, float]:
    """Each kernel's time in µs (summed over its calls) in one `run(mark)` of a step, from CUDA events
    recorded after each call: the GPU's time from the end of one kernel to the end of the next, which
    includes the wait for the host where the host's launches fall behind."""
    marks = [("start", torch.cuda.Event(enable_timing=True))]
    marks[0][1].record()

    def mark(name: str) -> None:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        marks.append((name, event))
    run(mark)
    marks[-1][1].synchronize()
    times: dict[str, float] = {}
    for (_, before), (name, after) in zip(marks, marks[1:]):
        times[name] = times.get(name, 0.0) + before.elapsed_time(after) * 1000
    return times


def kernel_times(torch, state: Rs2gpuLayer, x0, reps: int) -> dict[str, float]:
    """The median of each kernel's time in the decode step over `reps` steps (`marked_times`)."""
    steps = [marked_times(torch, lambda mark: state.decode(x0.clone(), mark)) for _ in range(reps)]
    return {name: float(np.median([step[name] for step in steps])) for name in steps[0]}


def host_times(torch, state: Rs2gpuLayer, x0, reps: int) -> dict[str, dict]:
    """Each kernel's host time per step in µs (the calls' own, median) and the entry points it ran, with
    the GPU synchronized after each call so that no call waits for another."""
    import time
    steps, variants = [], {}
    for _ in range(reps):
        step: dict[str, float] = {}
        last = [time.perf_counter()]

        def mark(name: str) -> None:
            now = time.perf_counter()
            step[name] = step.get(name, 0.0) + (now - last[0]) * 1e6
            variants[name] = getattr(getattr(state.k, name), "last_variants", None)
            torch.cuda.synchronize()
            last[0] = time.perf_counter()
        x = x0.clone()
        torch.cuda.synchronize()
        last[0] = time.perf_counter()
        state.decode(x, mark)
        steps.append(step)
    return {name: {"host_us": float(np.median([step[name] for step in steps])), "entry": variants[name]}
            for name in steps[0]}


def run_cuda(shape: Shape, reps: int, compile_too: bool) -> dict:
    import torch

    import rs2gpu
    kernels = rs2gpu.load(HERE, backend="cuda")
    layer = make_layer(shape)

    def like(v):
        if v.dtype == bf16():
            return torch.from_numpy(v.view(np.uint16).astype(np.int16)).view(torch.bfloat16).cuda()
        return torch.from_numpy(v).cuda()
    def empty(n: int, kind: str):
        return torch.zeros(n, dtype=torch.bfloat16 if kind == "bf16" else torch.float32, device="cuda")
    state = Rs2gpuLayer(kernels, layer, shape, like, empty)
    x = like(layer["x"])
    state.decode(x)
    got = x.view(torch.int16).cpu().numpy().view(np.uint16).view(bf16())
    w = torch_weights(torch, layer, shape)
    step = torch_decode_step(torch, w, shape)
    want = step(like(layer["x"])).view(torch.int16).cpu().numpy().view(np.uint16).view(bf16())
    out = {"shape": asdict(shape), "backend": "cuda", "device": torch.cuda.get_device_name(),
           "against_torch": compare(got, want), "against_numpy": compare(got, numpy_decode(layer, shape))}
    x0 = like(layer["x"])
    out["rs2gpu_us"] = time_cuda(torch, lambda: state.decode(x0.clone()), reps)
    out["torch_eager_us"] = time_cuda(torch, lambda: step(x0), reps)
    if compile_too:
        try:
            compiled = torch.compile(step)
            out["torch_compile_us"] = time_cuda(torch, lambda: compiled(x0), reps)
        except Exception as error:  # torch.compile needs a working Triton toolchain; say why it did not run
            out["torch_compile_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    out["rs2gpu_kernels_us"] = kernel_times(torch, state, x0, reps)
    out["rs2gpu_kernels_host"] = host_times(torch, state, x0, reps)
    weight_bytes = 2 * (4 * shape.hidden ** 2 + 3 * shape.hidden * shape.mlp)
    cache_bytes = 2 * 2 * shape.context * shape.hidden
    big = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    copy = torch.empty_like(big)
    copy_us = time_cuda(torch, lambda: copy.copy_(big), reps)
    out["copy_rate_gb_s"] = 2 * big.numel() / copy_us / 1e3
    out["bytes_read"] = weight_bytes + cache_bytes
    for name in ("rs2gpu", "torch_eager", "torch_compile"):
        if f"{name}_us" in out:
            out[f"{name}_of_copy_rate"] = out["bytes_read"] / out[f"{name}_us"] / 1e3 / out["copy_rate_gb_s"]
    out["prefill"] = run_cuda_prefill(torch, state, layer, shape, like, empty, w, max(reps // 5, 5), compile_too)
    return out


def run_cuda_prefill(torch, state: Rs2gpuLayer, layer: dict, shape: Shape, like, empty, w: dict, reps: int,
                     compile_too: bool) -> dict:
    """The layer over the prompt on the GPU: its result against PyTorch's and numpy's, and its time against
    PyTorch eager's (and torch.compile's), with the TFLOP/s of the work a dense layer does."""
    tokens, d = shape.context, shape.hidden
    prompt = like(layer["prompt"])
    x = prompt.clone()
    state.prefill(x, empty)
    got = x.view(torch.int16).cpu().numpy().view(np.uint16).view(bf16())
    layer_fn = torch_prefill(torch, w, shape)
    want = layer_fn(prompt.view(tokens, d)).reshape(-1).view(torch.int16).cpu().numpy().view(np.uint16).view(bf16())
    out = {"tokens": tokens, "against_torch": compare(got, want), "against_numpy": compare(got, numpy_prefill(layer, shape))}
    out["rs2gpu_us"] = time_cuda(torch, lambda: state.prefill(prompt.clone(), empty), reps)
    out["torch_eager_us"] = time_cuda(torch, lambda: layer_fn(prompt.view(tokens, d)), reps)
    if compile_too:
        try:
            compiled = torch.compile(layer_fn)
            out["torch_compile_us"] = time_cuda(torch, lambda: compiled(prompt.view(tokens, d)), reps)
        except Exception as error:  # torch.compile needs a working Triton toolchain; say why it did not run
            out["torch_compile_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    flops = 2 * tokens * (4 * d * d + 3 * d * shape.mlp) + 4 * shape.heads * tokens * tokens * shape.head_dim
    for name in ("rs2gpu", "torch_eager", "torch_compile"):
        if f"{name}_us" in out:
            out[f"{name}_tflops"] = flops / out[f"{name}_us"] / 1e6
    out["rs2gpu_kernels_us"] = prefill_kernel_times(torch, state, prompt, empty)
    return out


def prefill_kernel_times(torch, state: Rs2gpuLayer, prompt, empty) -> dict[str, dict]:
    """Each kernel's time in one prefill in µs (`marked_times`), with its entry points."""
    times = marked_times(torch, lambda mark: state.prefill(prompt.clone(), empty, mark))
    return {name: {"us": us, "entry": getattr(getattr(state.k, name), "last_variants", None)}
            for name, us in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="llama-2-7b")
    parser.add_argument("--reps", type=int, default=50, help="timed decode steps on cuda (default 50)")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile's step on cuda")
    parser.add_argument("--json", type=Path, help="write the results to this file as JSON")
    args = parser.parse_args(argv)
    shape = SHAPES[args.shape]
    result = run_cpu(shape) if args.backend == "cpu" else run_cuda(shape, args.reps, args.compile)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
