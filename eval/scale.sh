#!/usr/bin/env bash
# Memory of a large sync: 1,000 Markdown documents, ~50 MB, made from the eval
# corpus's plain-text and Markdown files (paragraphs drawn with a fixed seed).
# Runs `minirag-mcp sync` under /usr/bin/time: keyword-only (no model:
# converter, chunker, BM25 and the WAL alone) and, on the first 10 files,
# with the model, and prints wall time and peak RSS of each. Then, with the
# model on all 1,000, the time until every file answers a keyword query (the
# end of the sync's first phase; the sync is stopped there, as embedding all
# of it takes hours on 2 cores).
set -euo pipefail
cd "$(dirname "$0")"
bin=$(realpath ../target/debug/minirag-mcp)
model=${MINIRAG_MODEL:-$(realpath ../../shared/models/all-MiniLM-L6-v2)}
work=$(mktemp -d)
python3 - "$work/docs" <<'PY'
import glob, os, random, sys
out = sys.argv[1]
paras = []
for f in glob.glob("corpus/**/*.md", recursive=True) + glob.glob("corpus/**/*.txt", recursive=True):
    paras += [p.strip() for p in open(f, encoding="utf-8", errors="replace").read().split("\n\n") if len(p.strip()) > 80]
rng = random.Random(7)
for i in range(1000):
    d = os.path.join(out, f"part{i // 100:02d}")
    os.makedirs(d, exist_ok=True)
    body, size = [f"# Document {i}"], 0
    while size < 50_000:
        p = rng.choice(paras)
        if rng.random() < 0.1:
            body.append(f"## Section {len(body)}")
        body.append(p)
        size += len(p.encode()) + 2
    text = "\n\n".join(body) + "\n"
    open(os.path.join(d, f"doc{i:04d}.md"), "w", encoding="utf-8").write(text)
    if i < 10:
        os.makedirs(out + "-small", exist_ok=True)
        open(os.path.join(out + "-small", f"doc{i:04d}.md"), "w", encoding="utf-8").write(text)
PY
echo "corpus: $(find "$work/docs" -type f | wc -l) files, $(du -sh "$work/docs" | cut -f1)"
measure() { # label, env...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" env "$@" "$bin" sync --json > "$work/out.json" 2>/dev/null || true
  read -r secs kb < "$work/time"
  echo "$label: ${secs} s, peak RSS $((kb / 1024)) MB, $(python3 -c "import json;print(json.load(open('$work/out.json'))['counts'])")"
}
measure "1,000 docs, keyword-only (no model)" BASE_DIR="$work/docs" DB_PATH="$work/idx1" MODEL_PATH="$work/no-model"
echo "index: $(du -sh "$work/idx1" | cut -f1)"
measure "10 docs of them, with the model" BASE_DIR="$work/docs-small" DB_PATH="$work/idx2" MODEL_PATH="$model"
python3 - "$bin" "$work/docs" "$work/idx3" "$model" <<'PY'
import os, subprocess, sys, time
binary, docs, db, model = sys.argv[1:]
env = {"PATH": os.environ["PATH"], "BASE_DIR": docs, "DB_PATH": db, "MODEL_PATH": model,
       "CACHE_DIR": db + "-cache"}
started = time.monotonic()
p = subprocess.Popen([binary, "sync"], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
files, last = 0, 0.0
for line in p.stderr:
    if line.startswith("ingested "):
        files, last = files + 1, time.monotonic() - started
    if line.startswith("embedded "):
        print(f"1,000 docs with the model: {files} files keyword-searchable after {last:.1f} s "
              f"(the last 'ingested' line; then stopped, while embedding)")
        break
p.kill()
p.wait()
PY
rm -rf "$work"
