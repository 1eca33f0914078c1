#!/usr/bin/env bash
# asciidoctor-pdf as Antora Assembler calls it for one edition's PDF (antora-assembler.yml:
# build.command; the assembled book on stdin, `-o` the PDF), with a cache: scripts/antora.sh puts
# this first on the PATH (for `make site` and the site tests), so a second build with nothing
# changed in an edition converts no PDF, in this clone or any other on the machine.
#
# The key is a hash of everything the conversion reads: the assembled book itself (every page
# of the edition with the result partials it includes, the mermaid sources), the attributes
# Assembler passes (less revdate, the day of the build), the images under imagesdir (charts),
# scripts/pdf/ (extensions, themes, the mermaid renderer), package-lock.json (the mermaid the
# renderer uses) and the versions of the Debian packages that convert (asciidoctor-pdf, prawn,
# rouge, chromium). Paths inside the clone count relative to it (Assembler passes absolute
# ones), so two clones of the same commit share their PDFs. A PDF taken from the cache keeps
# the date on its title page of the build that made it (the same content).
#
#   TR4947_ASCIIDOCTOR_PDF   the real asciidoctor-pdf (required)
#   TR4947_PDF_CACHE         where the PDFs are kept (scripts/antora.sh sets it; PDF_CACHE=0
#                            there converts everything)
#   TR4947_PDF_LOG           a file that gets a line per PDF: name, built|reused, seconds
set -euo pipefail
real=${TR4947_ASCIIDOCTOR_PDF:?the real asciidoctor-pdf}
store=${TR4947_PDF_CACHE:?where the PDFs are kept}
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
t0=$(now)

out="" imagesdir="" key_args=() prev=""
for a in "$@"; do
  case $prev in
    -o) out=$a ;;
    -a) case $a in revdate=*) prev=""; continue ;; imagesdir=*) imagesdir=${a#imagesdir=} ;; esac ;;
  esac
  key_args+=("${a//$PWD\//./}"); prev=$a
done
if [ -z "$out" ] || [ "${!#}" != - ]; then exec "$real" "$@"; fi   # not Assembler's call: no cache

src=$(mktemp "${TMPDIR:-/tmp}/tr4947-pdf.XXXXXX")
cached=""
trap 'rm -f "$src" "$cached.$$"' EXIT
cat > "$src"

key=$(
  {
    printf '%s\0' "${key_args[@]}"
    sed "s#$PWD#.#g" "$src" | sha256sum        # the pages' origin URL names the clone
    # Charts and other images Assembler published for the books (mermaid/ holds the PNGs the
    # conversions themselves render, and the PDFs are outputs: neither is an input).
    if [ -n "$imagesdir" ] && [ -d "$imagesdir" ]; then
      (cd "$imagesdir" && find . -path ./mermaid -prune -o -type f ! -name '*.pdf' -print0 |
        sort -z | xargs -0 -r sha256sum)
    fi
    find scripts/pdf -type f -print0 | sort -z | xargs -0 -r sha256sum
    sha256sum package-lock.json
    dpkg-query -W ruby-asciidoctor-pdf ruby-prawn ruby-rouge chromium 2>/dev/null || true
  } | sha256sum | cut -c1-32
)
name=$(basename "$out")
slot=$(printf '%s' "${out#"$PWD"/}" | sha256sum | cut -c1-12)   # one cached PDF per output path
cached="$store/$slot-$key.pdf"
log() { if [ -n "${TR4947_PDF_LOG:-}" ]; then printf '%s\t%s\t%s\n' "$name" "$1" "$2" >> "$TR4947_PDF_LOG"; fi; }
took() { awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

if [ -f "$cached" ]; then
  mkdir -p "$(dirname "$out")"
  cp "$cached" "$out"
  echo "[site] PDF $name: unchanged (key ${key:0:12}), taken from $store" >&2
  log reused "$(took)"
  exit 0
fi
"$real" "$@" < "$src"
mkdir -p "$store"
cp "$out" "$cached.$$" && mv "$cached.$$" "$cached"        # whole or not at all
find "$store" -maxdepth 1 -name "$slot-*.pdf" ! -name "$slot-$key.pdf" -delete
echo "[site] PDF $name: converted ($(took) s), kept in $store (key ${key:0:12})" >&2
log built "$(took)"
