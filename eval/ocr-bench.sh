#!/usr/bin/env bash
# OCR throughput and memory: a scanned PDF of N pages (default 300), built
# from the committed fixture pages with pdftoppm and img2pdf, indexed by
# `minirag-mcp ingest`. Prints pages per second and the peak RSS of the
# binary and of its largest OCR child.
# usage: eval/ocr-bench.sh [PAGES]   (needs tesseract, poppler-utils, img2pdf)
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-300}
# The time is spent in the OCR children, so the build profile hardly
# matters; `cargo build -p minirag-mcp` first.
bin=${MINIRAG_BIN:-target/debug/minirag-mcp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs"
pdftoppm -r 150 -gray -png tests/fixtures/ocr/scan-en-ru.pdf "$work/p"
list=()
for i in $(seq 1 "$pages"); do
  if (( i % 2 )); then list+=("$work/p-1.png"); else list+=("$work/p-2.png"); fi
done
img2pdf "${list[@]}" -o "$work/docs/scanned.pdf"
export BASE_DIR="$work/docs" DB_PATH="$work/db" MODEL_PATH="${MODEL_PATH:-../shared/models/all-MiniLM-L6-v2}"
"$bin" status >/dev/null
start=$(date +%s.%N)
/usr/bin/time -v "$bin" ingest "$work/docs/scanned.pdf" >"$work/out" 2>"$work/time" || { cat "$work/time"; exit 1; }
end=$(date +%s.%N)
secs=$(echo "$end - $start" | bc)
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
echo "pages: $pages  seconds: $secs  pages/s: $(echo "scale=2; $pages / $secs" | bc)  peak RSS (binary or largest child, KB): $rss"
