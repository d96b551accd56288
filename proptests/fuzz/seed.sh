#!/usr/bin/env bash
# Seeds each target's corpus with the converter fixtures of its format.
set -euo pipefail
cd "$(dirname "$0")"
for f in docx pptx xlsx epub pdf ipynb vtt html csv; do
  mkdir -p corpus/convert_$f
  cp ../../adapters/convert/tests/fixtures/*.$f corpus/convert_$f/ 2>/dev/null || true
done
