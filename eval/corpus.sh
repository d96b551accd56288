#!/usr/bin/env bash
# Rebuilds eval/corpus/ from pinned Debian packages and the crates pinned in
# Cargo.lock: documents nobody on the team wrote. Needs apt-get (download
# only, nothing is installed), dpkg-deb, and LibreOffice for the few office
# files (apt-get install -y libreoffice-writer-nogui).
set -euo pipefail
cd "$(dirname "$0")"
PKGS=(
  postgresql-doc-15=15.18-0+deb12u1
  rust-doc=1.63.0+dfsg1-2
  aptitude-doc-ru=0.8.13-5
  debian-faq-ru=11.1
  maint-guide-ru=1.2.53
)
cache=.cache; out=corpus
mkdir -p "$cache/debs" "$cache/x"
( cd "$cache/debs" && for p in "${PKGS[@]}"; do ls "${p%%=*}"_*.deb >/dev/null 2>&1 || apt-get download "$p"; done )
for deb in "$cache"/debs/*.deb; do
  name=$(basename "$deb"); name=${name%%_*}
  [ -d "$cache/x/$name" ] || { mkdir -p "$cache/x/$name"; dpkg-deb -x "$deb" "$cache/x/$name"; }
done
rm -rf "$out"; mkdir -p "$out"/{postgresql,rust-book,ru/aptitude,ru/maint-guide,ru/faq,crates,office}
pg=$cache/x/postgresql-doc-15/usr/share/doc/postgresql-doc-15/html
cp "$pg"/sql-*.html "$pg"/functions-*.html "$pg"/datatype-*.html "$out/postgresql/"
cp "$cache"/x/rust-doc/usr/share/doc/rust-doc/html/book/ch*.html "$out/rust-book/"
cp "$cache"/x/aptitude-doc-ru/usr/share/doc/aptitude/html/ru/*.html "$out/ru/aptitude/"
cp "$cache"/x/maint-guide-ru/usr/share/doc/maint-guide-ru/html/*.html "$out/ru/maint-guide/" 2>/dev/null \
  || find "$cache/x/maint-guide-ru" -name '*.html' -exec cp {} "$out/ru/maint-guide/" \;
faq=$cache/x/debian-faq-ru/usr/share/doc/debian/FAQ
gunzip -c "$faq/debian-faq.ru.txt.gz" > "$out/ru/faq/debian-faq.ru.txt"
gunzip -c "$faq/debian-faq.ru.pdf.gz" > "$out/ru/faq/debian-faq.ru.pdf"
# Thin the two big manuals so that ingest takes minutes, not an hour, on two
# cores: every judged document stays, plus every second other page.
python3 - "$out" <<'PY'
import os, sys
out = sys.argv[1]
judged = set()
for line in open("queries.tsv", encoding="utf-8"):
    if not line.startswith("#") and line.strip():
        judged.update(line.rstrip("\n").split("\t")[2].split(","))
for d in ("postgresql", "rust-book"):
    names = sorted(os.listdir(os.path.join(out, d)))
    others = [n for n in names if f"{d}/{n}" not in judged]
    for i, n in enumerate(others):
        reference_manual = n.startswith(("functions-", "datatype-"))
        if i % 2 == 1 or reference_manual:
            os.remove(os.path.join(out, d, n))
PY
# READMEs of the crates this workspace depends on directly, at the versions
# Cargo.lock pins (cargo fetch puts them in the registry).
( cd .. && cargo fetch -q )
reg=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
direct=$(cat ../*/Cargo.toml ../adapters/*/Cargo.toml ../bins/*/Cargo.toml |
  grep -oE '^[a-z0-9_-]+ = (\{|")' | cut -d' ' -f1 | sort -u)
awk '/^name = /{n=$3} /^version = /{v=$3; gsub(/"/,"",n); gsub(/"/,"",v); print n" "v}' ../Cargo.lock |
  while read -r n v; do
    grep -qx "$n" <<<"$direct" && [ -f "$reg/$n-$v/README.md" ] && cp "$reg/$n-$v/README.md" "$out/crates/$n.md" || true
  done
# A few office files: PostgreSQL pages re-saved by LibreOffice Writer.
prof=$(mktemp -d)
for page in sql-copy sql-createpolicy sql-listen; do
  soffice --headless -env:UserInstallation=file://$prof --convert-to docx:"MS Word 2007 XML" \
    --outdir "$out/office" "$pg/$page.html" >/dev/null 2>&1
done
soffice --headless -env:UserInstallation=file://$prof --convert-to pdf:writer_web_pdf_Export \
  --outdir "$out/office" "$pg/sql-prepare.html" >/dev/null 2>&1
rm -rf "$prof"
find "$out" -type f | sed 's/.*\.//' | sort | uniq -c
echo "$(find "$out" -type f | wc -l) documents, $(du -sh "$out" | cut -f1)"
