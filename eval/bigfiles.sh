#!/usr/bin/env bash
# Big single files: time and peak RSS of a keyword-only sync (no model) of
# one generated file per format and size, and the time per MB, so growth
# that is not linear shows. Markdown (a heading every ~50 lines), CSV (five
# columns), HTML (sections of paragraphs and a table), and, where
# LibreOffice is installed, XLSX (Calc's export of the CSV) and PDF
# (Writer's export of plain paragraphs).
#
#   eval/bigfiles.sh                 # sizes 10 50 90 MB, every format
#   SIZES="10 90" FORMATS="csv md" eval/bigfiles.sh
#   WITH_MODEL=../shared/models/all-MiniLM-L6-v2 MODEL_SIZES=90 eval/bigfiles.sh
#
# With WITH_MODEL (a model folder), a second table syncs a Markdown file of
# each of MODEL_SIZES (default 90) MB with the model: time, peak RSS, the
# embedding phase's time (from its first progress line to the end) and how
# many times the progress line moved within the file. About 20-40 min for
# 90 MB on 2 cores.
#
# XLSX sizes are those of the CSV it is made from (a sheet holds at most
# 1,048,576 rows: Calc keeps the first ones). Writer's layout time grows
# faster than the text (10 MB of text: 20 s; 50 MB: over 4 min), so a PDF is
# Writer's export of 20 MB of text (about 10 MB of PDF, 4,000 pages) joined
# with itself by poppler's pdfunite up to the size asked for.
set -euo pipefail
cd "$(dirname "$0")"
bin=$(realpath ../target/release/minirag-mcp)
[ -x "$bin" ] || { echo "build it first: cargo build --release -p minirag-mcp" >&2; exit 1; }
sizes=${SIZES:-10 50 90}
formats=${FORMATS:-md csv html xlsx pdf}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() { # format, MB, out
  python3 - "$1" "$2" "$3" <<'PY'
import random, sys
fmt, mb, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
limit = mb * 1_000_000
r = random.Random(11)
words = ("harbour crane bollard fender lighting dredging gate pump radio survey crew "
         "unit quarter season parts hours tide berth vessel cargo pallet ledger").split()
def sentence(lo=8, hi=20):
    return " ".join(r.choice(words) for _ in range(r.randint(lo, hi))).capitalize() + "."
with open(out, "w", encoding="utf-8") as f:
    n = 0
    if fmt == "csv":
        f.write("id,name,city,amount,note\n")
    if fmt == "html":
        f.write("<!doctype html><html><head><title>Big page</title></head><body>\n")
    while f.tell() < limit:
        if fmt == "csv":
            f.write(f"{n},{r.choice(words)} {r.choice(words)},{r.choice(words).title()},"
                    f"{r.randint(1, 99999)}.{r.randint(0, 99):02d},{sentence(3, 6)}\n")
        elif fmt == "md":
            f.write(f"## Section {n}\n\n")
            for _ in range(12):
                f.write(" ".join(sentence() for _ in range(3)) + "\n\n")
        elif fmt == "html":
            f.write(f"<h2>Section {n}</h2>\n")
            for _ in range(8):
                f.write(f"<p>{sentence()} {sentence()}</p>\n")
            f.write("<table><tr><th>unit</th><th>hours</th></tr>")
            for k in range(5):
                f.write(f"<tr><td>{r.choice(words)}-{k}</td><td>{r.randint(1, 90)}</td></tr>")
            f.write("</table>\n")
        elif fmt == "txt":
            f.write(" ".join(sentence() for _ in range(4)) + "\n\n")
        n += 1
    if fmt == "html":
        f.write("</body></html>\n")
PY
}
lo() { soffice --headless -env:UserInstallation=file://$work/profile --convert-to "$1" --outdir "$2" "$3" >/dev/null 2>&1; }
printf '| format | MB | sync s | s/MB | peak RSS MB | chunks |\n|---|---|---|---|---|---|\n'
for fmt in $formats; do
  for mb in $sizes; do
    dir="$work/$fmt-$mb"; mkdir -p "$dir"
    case $fmt in
      md|csv|html) gen "$fmt" "$mb" "$dir/big.$fmt" ;;
      xlsx)
        command -v soffice >/dev/null || { echo "| xlsx | $mb | (LibreOffice missing) |"; continue; }
        gen csv "$mb" "$work/big.csv" && lo xlsx "$dir" "$work/big.csv" && rm "$work/big.csv" ;;
      pdf)
        command -v soffice >/dev/null || { echo "| pdf | $mb | (LibreOffice missing) |"; continue; }
        if [ ! -f "$work/base.pdf" ]; then
          gen txt 20 "$work/base.txt" && lo pdf "$work" "$work/base.txt" && rm "$work/base.txt"
        fi
        base_mb=$(python3 -c "import os;print(os.path.getsize('$work/base.pdf')/1e6)")
        copies=$(python3 -c "import math;print(max(1, round($mb / $base_mb)))")
        if [ "$copies" -eq 1 ]; then cp "$work/base.pdf" "$dir/big.pdf"
        else pdfunite $(yes "$work/base.pdf" | head -n "$copies") "$dir/big.pdf"; fi ;;
    esac
    file=$(ls "$dir"/big.*)
    size=$(python3 -c "import os;print(round(os.path.getsize('$file')/1e6,1))")
    /usr/bin/time -f "%e %M" -o "$work/time" env BASE_DIR="$dir" DB_PATH="$work/idx-$fmt-$mb" \
      MODEL_PATH="$work/no-model" "$bin" sync --json > "$work/out.json" 2>/dev/null || true
    read -r secs kb < "$work/time"
    chunks=$(env BASE_DIR="$dir" DB_PATH="$work/idx-$fmt-$mb" "$bin" status --json | python3 -c "import json,sys;print(json.load(sys.stdin)['chunkCount'])")
    echo "| $fmt | $size | $secs | $(python3 -c "print(round($secs/$size,3))") | $((kb / 1024)) | $chunks |"
    rm -rf "$dir" "$work/idx-$fmt-$mb"
  done
done
[ -n "${WITH_MODEL:-}" ] || exit 0
model=$(realpath "$WITH_MODEL")
printf '\n| with model | MB | sync s | embedding s | peak RSS MB | chunks | progress moves |\n|---|---|---|---|---|---|---|\n'
for mb in ${MODEL_SIZES:-90}; do
  dir="$work/model-$mb"; mkdir -p "$dir"
  gen md "$mb" "$dir/big.md"
  size=$(python3 -c "import os;print(round(os.path.getsize('$dir/big.md')/1e6,1))")
  # Progress lines (split on CR or LF) with the second each arrived.
  /usr/bin/time -f "%e %M" -o "$work/time" env BASE_DIR="$dir" DB_PATH="$work/idx-model-$mb" \
    MODEL_PATH="$model" "$bin" sync 2>&1 >/dev/null | python3 -c '
import re, sys, time
start, first, moves = time.time(), None, 0
buf = b""
while chunk := sys.stdin.buffer.read1(4096):
    buf += chunk
    *lines, buf = re.split(rb"[\r\n]", buf)
    for line in lines:
        if re.match(rb"embedding .*: \d+ / \d+ chunks", line):
            first = first or time.time()
            moves += 1
print(round(time.time() - first, 1) if first else "-", moves)
' > "$work/embed"
  read -r secs kb < "$work/time"
  read -r embed moves < "$work/embed"
  chunks=$(env BASE_DIR="$dir" DB_PATH="$work/idx-model-$mb" "$bin" status --json | python3 -c "import json,sys;print(json.load(sys.stdin)['chunkCount'])")
  echo "| Markdown | $size | $secs | $embed | $((kb / 1024)) | $chunks | $moves |"
  rm -rf "$dir" "$work/idx-model-$mb"
done
