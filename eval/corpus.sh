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
  developers-reference-ru=12.18
  doublecmd-help-ru=1.0.10-1
  ubuntu-packaging-guide-html-ru=1.0.4
  gimp-help-ru=2.10.34-2
  manpages-ru=4.18.1-1
)
cache=.cache; out=corpus
mkdir -p "$cache/debs" "$cache/x"
( cd "$cache/debs" && for p in "${PKGS[@]}"; do ls "${p%%=*}"_*.deb >/dev/null 2>&1 || apt-get download "$p"; done )
for deb in "$cache"/debs/*.deb; do
  name=$(basename "$deb"); name=${name%%_*}
  [ -d "$cache/x/$name" ] || { mkdir -p "$cache/x/$name"; dpkg-deb -x "$deb" "$cache/x/$name"; }
done
rm -rf "$out"; mkdir -p "$out"/{postgresql,rust-book,crates,office} "$out"/ru/{aptitude,maint-guide,faq,devref,doublecmd,ubuntu-packaging,gimp,man}
x=$cache/x
pg=$x/postgresql-doc-15/usr/share/doc/postgresql-doc-15/html
# The SQL reference, functions, types and settings, and the chapters on
# DDL, queries, indexes, MVCC, WAL, text search, backup, authentication and
# the client programs: about 400 pages.
for page in "$pg"/*.html; do
  case $(basename "$page") in
    sql-*|functions-*|datatype-*|runtime-config*|ddl*|queries*|indexes*|mvcc*|wal*|textsearch*|tutorial*|app-*|backup*|continuous*|auth*|client-auth*|routine*)
      cp "$page" "$out/postgresql/" ;;
  esac
done
book=$x/rust-doc/usr/share/doc/rust-doc/html/book
cp "$book"/ch*.html "$book"/appendix-0[1-7]-*.html "$out/rust-book/"
cp "$x"/aptitude-doc-ru/usr/share/doc/aptitude/html/ru/*.html "$out/ru/aptitude/"
find "$x/maint-guide-ru" -name '*.html' -exec cp {} "$out/ru/maint-guide/" \;
faq=$x/debian-faq-ru/usr/share/doc/debian/FAQ
gunzip -c "$faq/debian-faq.ru.txt.gz" > "$out/ru/faq/debian-faq.ru.txt"
gunzip -c "$faq/debian-faq.ru.pdf.gz" > "$out/ru/faq/debian-faq.ru.pdf"
cp "$x"/developers-reference-ru/usr/share/developers-reference/ru/*.html "$out/ru/devref/"
cp "$x"/doublecmd-help-ru/usr/share/doublecmd/doc/ru/*.html "$out/ru/doublecmd/"
cp "$x"/ubuntu-packaging-guide-html-ru/usr/share/doc/ubuntu-packaging-guide-html-ru/*.html "$out/ru/ubuntu-packaging/"
# Search pages hold no text, and developers-reference.html repeats every
# chapter on one page.
rm "$out"/ru/devref/{developers-reference,search}.html "$out"/ru/ubuntu-packaging/search.html
# GIMP's Russian help: the filters, tools, plug-ins, layers and image
# commands (about 380 of its 685 pages).
for page in "$x"/gimp-help-ru/usr/share/gimp/2.0/help/ru/*.html; do
  case $(basename "$page") in
    gimp-filter*|filters*|gimp-tool*|plug-in*|script-fu*|gimp-layer*|gimp-image*) cp "$page" "$out/ru/gimp/" ;;
  esac
done
# Russian man pages: short reference pages, where a whole page answers and
# document length matters. man-db renders each to plain text (what `man`
# shows); the character-set tables of section 7 hold no prose.
for page in "$x"/manpages-ru/usr/share/man/ru/man[14578]/*.gz; do
  name=$(basename "$page" .gz)
  case $name in
    iso*|latin*|koi8*|cp12*|armscii*|tis-620*|intro.*|utf8.*|ld-linux.so.*) continue ;;
  esac
  MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null | col -bx > "$out/ru/man/$name.txt"
  [ -s "$out/ru/man/$name.txt" ] || rm "$out/ru/man/$name.txt"
done
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
