#!/usr/bin/env bash
# Seeds each target's corpus with the converter fixtures of its format.
set -euo pipefail
cd "$(dirname "$0")"
for f in docx pptx xlsx epub pdf ipynb vtt html csv; do
  mkdir -p corpus/convert_$f
  cp ../../adapters/convert/tests/fixtures/*.$f corpus/convert_$f/ 2>/dev/null || true
done
# front_matter: real front matter, and the alias bomb of the hostile review.
mkdir -p corpus/front_matter corpus/glob
printf 'title: Outage review\ntags: [incident, db]\nauthor:\n  - Ada\n---\n# Body\n' > corpus/front_matter/plain
printf 'a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\nBody\n' > corpus/front_matter/aliases
printf '**/specs/**\nteam/specs/api.md' > corpus/glob/specs
printf '[!a-c]*.md\nx/d.md' > corpus/glob/class
# open_index: a real log written by the binary (a keyword-only sync of two
# notes), as the raw shape: no snapshot, then the log.
mkdir -p corpus/open_index
work=$(mktemp -d)
mkdir -p "$work/docs"
printf '# Alpha\n\nalpha beta gamma\n' > "$work/docs/a.md"
printf '# Beta\n\nbeta delta\n\n## More\n\nepsilon\n' > "$work/docs/b.md"
BASE_DIR="$work/docs" DB_PATH="$work/index" MODEL_PATH="$work/none" \
  ../../target/debug/minirag-mcp sync >/dev/null 2>&1 || true
{ printf '\000\000\000'; cat "$work/index/wal.log"; } > corpus/open_index/keyword-sync
rm -rf "$work"
