#!/usr/bin/env python3
"""Warm query latency over MCP stdio against an existing index.

usage: query_latency.py BINARY DB_PATH BASE_DIR QUERIES.tsv [CALLS]

Starts BINARY as an MCP server (MODEL_PATH from MINIRAG_MODEL, else the
shared all-MiniLM-L6-v2), initialises it, answers one query to warm it, then
times CALLS `query_documents` calls (the queries of the file in turn) and
prints p50 and p95. Two binaries run one after the other compare side by
side. Standard library only.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    binary, db, base, qfile = sys.argv[1:5]
    calls = int(sys.argv[5]) if len(sys.argv) > 5 else 200
    model = os.environ.get("MINIRAG_MODEL", os.path.join(HERE, "..", "..", "shared", "models", "all-MiniLM-L6-v2"))
    env = dict(os.environ, DB_PATH=db, BASE_DIR=base, MODEL_PATH=model)
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)

    def send(message):
        p.stdin.write(json.dumps(message) + "\n")
        p.stdin.flush()

    def call(i, method, params):
        send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                if "error" in m:
                    sys.exit(f"{method}: {m['error']}")
                return m

    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "query_latency", "version": "0"}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    queries = []
    for line in open(qfile, encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            parts = line.rstrip("\n").split("\t")
            queries.append(parts[1] if len(parts) > 1 else parts[0])
    call(1, "tools/call", {"name": "query_documents", "arguments": {"query": queries[0]}})
    times = []
    for k in range(calls):
        t = time.perf_counter()
        call(k + 2, "tools/call", {"name": "query_documents", "arguments": {"query": queries[k % len(queries)]}})
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"{binary}: p50 {statistics.median(times):.1f} ms, p95 {times[int(len(times) * 0.95)]:.1f} ms over {calls} calls")
    p.terminate()


if __name__ == "__main__":
    main()
