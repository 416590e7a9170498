"""Tiny random-weight models for the ggml programs of scripts/ggml_clients.sh (no model can be
downloaded here, and the programs only need the file layouts, not trained weights).

    python scripts/ggml_tiny_models.py whisper OUT.bin [--seed N]
    python scripts/ggml_tiny_models.py llama OUT.gguf [--seed N]

whisper: whisper.cpp's ggml file (the layout its convert-pt-to-ggml.py writes and
whisper_model_load reads): the magic, eleven int32 hyperparameters, the mel filter bank, the
vocabulary, then each tensor as (n_dims, name length, type, ne..., name, data) with ne in ggml's
order (innermost first). Matrices are f16 (ftype 1), biases, norms and positional embeddings f32.
Dimensions are small (one encoder and one decoder layer, 128-wide, head size 64) except the
decoder's context: whisper-bench decodes 256 tokens at once, so n_text_ctx is 256.

llama: a GGUF (version 3) file of llama.cpp's "llama" architecture, written here without the
gguf package: two layers, 128-wide, two heads of 64, f16 matrices, and a SentencePiece-style
vocabulary ("llama" tokenizer) of <unk>, <s>, </s>, the 256 byte tokens and a few word pieces,
so that any prompt tokenizes (byte fallback) and any generated token prints."""
import argparse
import struct
import sys

import numpy as np

WHISPER = dict(n_vocab=512, n_audio_ctx=64, n_audio_state=128, n_audio_head=2, n_audio_layer=1,
               n_text_ctx=256, n_text_state=128, n_text_head=2, n_text_layer=1, n_mels=80, ftype=1)
F32, F16 = 0, 1


def _whisper_tensors(h):
    """(name, ne in ggml order, type) of every tensor whisper_model_load creates."""
    s, m = h["n_audio_state"], h["n_mels"]
    block = [("mlp_ln.weight", (s,), F32), ("mlp_ln.bias", (s,), F32),
             ("mlp.0.weight", (s, 4 * s), F16), ("mlp.0.bias", (4 * s,), F32),
             ("mlp.2.weight", (4 * s, s), F16), ("mlp.2.bias", (s,), F32)]
    attn = [("attn_ln.weight", (s,), F32), ("attn_ln.bias", (s,), F32),
            ("attn.query.weight", (s, s), F16), ("attn.query.bias", (s,), F32),
            ("attn.key.weight", (s, s), F16),
            ("attn.value.weight", (s, s), F16), ("attn.value.bias", (s,), F32),
            ("attn.out.weight", (s, s), F16), ("attn.out.bias", (s,), F32)]
    cross = [("cross_" + n, ne, t) for n, ne, t in attn]
    out = [("encoder.positional_embedding", (s, h["n_audio_ctx"]), F32),
           ("encoder.conv1.weight", (3, m, s), F16), ("encoder.conv1.bias", (1, s), F32),
           ("encoder.conv2.weight", (3, s, s), F16), ("encoder.conv2.bias", (1, s), F32),
           ("encoder.ln_post.weight", (s,), F32), ("encoder.ln_post.bias", (s,), F32)]
    for i in range(h["n_audio_layer"]):
        out += [(f"encoder.blocks.{i}.{n}", ne, t) for n, ne, t in block + attn]
    out += [("decoder.positional_embedding", (s, h["n_text_ctx"]), F32),
            ("decoder.token_embedding.weight", (s, h["n_vocab"]), F16),
            ("decoder.ln.weight", (s,), F32), ("decoder.ln.bias", (s,), F32)]
    for i in range(h["n_text_layer"]):
        out += [(f"decoder.blocks.{i}.{n}", ne, t) for n, ne, t in block + attn + cross]
    return out


def write_whisper(path, seed=0, **overrides):
    """Write a whisper.cpp ggml model with random weights; returns the hyperparameters."""
    h = dict(WHISPER, **overrides)
    rng = np.random.default_rng(seed)
    n_fft = 201
    with open(path, "wb") as f:
        f.write(struct.pack("<I", 0x67676D6C))
        f.write(struct.pack("<11i", *h.values()))
        f.write(struct.pack("<ii", h["n_mels"], n_fft))
        f.write(rng.random((h["n_mels"], n_fft), dtype=np.float32).tobytes())
        f.write(struct.pack("<i", h["n_vocab"]))
        for i in range(h["n_vocab"]):
            word = f"t{i}".encode()
            f.write(struct.pack("<I", len(word)) + word)
        for name, ne, ttype in _whisper_tensors(h):
            norm = name.endswith(("ln.weight", "ln_post.weight"))
            scale = 1.0 if norm else 1.0 / np.sqrt(ne[0])
            data = (1.0 + 0.1 * rng.standard_normal(ne[::-1])) if norm else \
                scale * rng.standard_normal(ne[::-1])
            data = data.astype(np.float16 if ttype == F16 else np.float32)
            key = name.encode()
            f.write(struct.pack(f"<3i{len(ne)}i", len(ne), len(key), ttype, *ne) + key)
            f.write(data.tobytes())
    return h


LLAMA = dict(context_length=256, embedding_length=128, block_count=2, feed_forward_length=256,
             head_count=2, head_count_kv=2)
WORDS = ["\u2581the", "\u2581a", "\u2581emu", "\u2581runs", "\u2581on", "\u2581GPU", "s", "ing", "ed"]
# GGUF value types
U32, I32, F32V, STR, ARR = 4, 5, 6, 8, 9


def _gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _gguf_value(kind, v):
    if kind == STR:
        return _gguf_str(v)
    if kind == ARR:
        elem, items = v
        return struct.pack("<IQ", elem, len(items)) + b"".join(_gguf_value(elem, x) for x in items)
    return struct.pack({U32: "<I", I32: "<i", F32V: "<f"}[kind], v)


def write_llama(path, seed=0, **overrides):
    """Write a llama-architecture GGUF with random weights; returns the vocabulary."""
    h = dict(LLAMA, **overrides)
    rng = np.random.default_rng(seed)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + WORDS
    types = [2, 3, 3] + [6] * 256 + [1] * len(WORDS)
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [-float(i) for i in range(len(WORDS))]
    e, ff, nv = h["embedding_length"], h["feed_forward_length"], len(tokens)
    ekv = e // h["head_count"] * h["head_count_kv"]
    meta = [("general.architecture", STR, "llama"), ("general.name", STR, "emu tiny llama"),
            ("general.alignment", U32, 32)]
    meta += [(f"llama.{k}", U32, v) for k, v in h.items() if k not in ("head_count", "head_count_kv")]
    meta += [("llama.attention.head_count", U32, h["head_count"]),
             ("llama.attention.head_count_kv", U32, h["head_count_kv"]),
             ("llama.rope.dimension_count", U32, e // h["head_count"]),
             ("llama.attention.layer_norm_rms_epsilon", F32V, 1e-5),
             ("llama.vocab_size", U32, nv),
             ("tokenizer.ggml.model", STR, "llama"), ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
             ("tokenizer.ggml.scores", ARR, (F32V, scores)), ("tokenizer.ggml.token_type", ARR, (I32, types)),
             ("tokenizer.ggml.unknown_token_id", U32, 0), ("tokenizer.ggml.bos_token_id", U32, 1),
             ("tokenizer.ggml.eos_token_id", U32, 2)]
    tensors = [("token_embd.weight", (e, nv), F16), ("output_norm.weight", (e,), F32),
               ("output.weight", (e, nv), F16)]
    for i in range(h["block_count"]):
        tensors += [(f"blk.{i}.{n}", ne, t) for n, ne, t in [
            ("attn_norm.weight", (e,), F32), ("attn_q.weight", (e, e), F16),
            ("attn_k.weight", (e, ekv), F16), ("attn_v.weight", (e, ekv), F16),
            ("attn_output.weight", (e, e), F16), ("ffn_norm.weight", (e,), F32),
            ("ffn_gate.weight", (e, ff), F16), ("ffn_up.weight", (e, ff), F16),
            ("ffn_down.weight", (ff, e), F16)]]
    blobs, infos, offset = [], b"", 0
    for name, ne, ttype in tensors:
        data = (1.0 + 0.1 * rng.standard_normal(ne[::-1])) if name.endswith("norm.weight") else \
            rng.standard_normal(ne[::-1]) / np.sqrt(ne[0])
        blob = data.astype(np.float16 if ttype == F16 else np.float32).tobytes()
        infos += _gguf_str(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, ttype, offset)
        blob += b"\0" * (-len(blob) % 32)
        blobs.append(blob)
        offset += len(blob)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    head += b"".join(_gguf_str(k) + struct.pack("<I", kind) + _gguf_value(kind, v) for k, kind, v in meta)
    head += infos
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % 32))
        f.write(b"".join(blobs))
    return tokens


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["whisper", "llama"])
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    (write_whisper if a.kind == "whisper" else write_llama)(a.out, a.seed)
    print(a.out)


if __name__ == "__main__":
    sys.exit(main())
