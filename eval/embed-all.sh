#!/usr/bin/env bash
# Time to searchable and time to fully embedded, builds side by side:
# 1,000 Markdown documents of ~5 KB (paragraphs of the eval corpus drawn with
# a fixed seed, as eval/scale.sh draws them) synced from scratch with the
# model by each BINARY in turn, one after the other in this run. Prints, per
# build: when the last file was keyword-searchable (its last `ingested`
# line), when the sync ended (every chunk embedded), peak RSS and counts.
#
# usage: eval/embed-all.sh BINARY... (env DOCS=1000, KB=5)
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 1 ] || { echo "usage: eval/embed-all.sh BINARY..." >&2; exit 2; }
model=${MINIRAG_MODEL:-$(realpath ../../shared/models/all-MiniLM-L6-v2)}
docs=${DOCS:-1000}
kb=${KB:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/docs" "$docs" "$kb" <<'PY'
import glob, os, random, sys
out, count, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
paras = []
for f in sorted(glob.glob("corpus/**/*.md", recursive=True) + glob.glob("corpus/**/*.txt", recursive=True)):
    paras += [p.strip() for p in open(f, encoding="utf-8", errors="replace").read().split("\n\n") if len(p.strip()) > 80]
rng = random.Random(7)
for i in range(count):
    d = os.path.join(out, f"part{i // 100:02d}")
    os.makedirs(d, exist_ok=True)
    body, size = [f"# Document {i}"], 0
    while size < kb * 1000:
        p = rng.choice(paras)
        if rng.random() < 0.1:
            body.append(f"## Section {len(body)}")
        body.append(p)
        size += len(p.encode()) + 2
    open(os.path.join(d, f"doc{i:04d}.md"), "w", encoding="utf-8").write("\n\n".join(body) + "\n")
PY
echo "corpus: $(find "$work/docs" -type f | wc -l) files, $(du -sh "$work/docs" | cut -f1); $(nproc) cores"
n=0
for bin in "$@"; do
  n=$((n + 1))
  python3 - "$(realpath "$bin")" "$work/docs" "$work/idx$n" "$model" <<'PY'
import json, os, subprocess, sys, time
binary, docs, db, model = sys.argv[1:]
env = {"PATH": os.environ["PATH"], "BASE_DIR": docs, "DB_PATH": db, "MODEL_PATH": model,
       "CACHE_DIR": db + "-cache"}
started = time.monotonic()
p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", db + ".rss", binary, "sync", "--json"],
                     env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
files, last = 0, 0.0
for line in p.stderr:
    if line.startswith("ingested "):
        files, last = files + 1, time.monotonic() - started
out = p.stdout.read()
p.wait()
ended = time.monotonic() - started
rss = int(open(db + ".rss").read().split()[-1]) // 1024
counts = json.loads(out)["counts"] if out.strip() else "no summary"
print(f"{binary}: {files} files keyword-searchable after {last:.1f} s; "
      f"everything embedded after {ended:.1f} s; peak RSS {rss} MB; {counts}")
PY
done
