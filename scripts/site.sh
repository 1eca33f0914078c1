#!/usr/bin/env bash
# The main job behind `make site`: run the chapters whose inputs changed since their committed
# results on the target (default: the embedded lab), render every result into the guide,
# build it, and say where to open it and how long each part took.
#   TARGET=<inventory>   run on that target (results land under results/<target>/)
#   CHAPTERS="a b"       run these chapters even if they are up to date
#   FORCE=1              run every chapter
#   CONFIRM=1            let state-changing steps run on a real target (default: a dry run)
#   RUNBOOK=0            run no chapter: build the guide from the results as they are
#   PDF_CACHE=0          convert every edition's PDF, changed or not
# The PDFs: Antora Assembler converts one per edition with asciidoctor-pdf (about 45 s of CPU
# each); scripts/antora.sh keys each by a hash of what it is made of (the assembled pages, the
# results they include, images, theme) and takes an unchanged one from ~/.cache/tr4947/pdf-cache,
# so a second `make site` with nothing changed converts none.
set -euo pipefail
cd "$(dirname "$0")/.."
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
start=$(now)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tr4947-site.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
parts=()
part() { parts+=("$(printf '%-34s %6s s  %s' "$1" "$2" "${3:-}" | sed 's/ *$//')"); }

# --- the runbook ---------------------------------------------------------------------------
args=(--target "${TARGET:-lab}")
[ -n "${FORCE:-}" ] && args+=(--force)
[ -n "${CONFIRM:-}" ] && args+=(--confirm)
# shellcheck disable=SC2206
[ -n "${CHAPTERS:-}" ] && args+=(${CHAPTERS})
status=0
t=$(now)
if [ "${RUNBOOK:-1}" = 0 ]; then
  echo "== runbook: not run (RUNBOOK=0): the guide shows the results as they are"
  part "runbook" "$(since "$t")" "not run (RUNBOOK=0)"
else
  echo "== runbook: chapters on target ${TARGET:-lab}"
  .venv/bin/python -m tr4947.runbook "${args[@]}" || status=$?
  note="chapters on ${TARGET:-lab}"
  if ((status)); then note+=", some failed"; fi
  part "runbook" "$(since "$t")" "$note"
fi

# --- the guide: Antora (results rendered by the collector, HTML, PDFs) ---------------------
echo "== site: Antora build (results rendered from results/)"
# When each stage of Antora's build ended, from its events (a listener before the
# extensions' and one after them), for the timing lines below.
cat > "$tmp/site-timing.js" <<'EOF'
'use strict'
const fs = require('node:fs')
module.exports.register = function () {
  const file = process.env.TR4947_SITE_TIMES
  if (!file) return
  const mark = (name) => () => fs.appendFileSync(file, `${name}\t${Date.now() / 1000}\n`)
  mark('start')()
  this.prependListener('contentAggregated', mark('aggregated'))
  this.on('contentAggregated', mark('collected'))
  this.prependListener('navigationBuilt', mark('navigation'))
  this.on('navigationBuilt', mark('pdfs'))
  this.on('sitePublished', mark('published'))
}
EOF
export TR4947_SITE_TIMES="$tmp/times.tsv" TR4947_PDF_LOG="$tmp/pdfs.tsv"
t=$(now)
bash scripts/antora.sh --extension "$tmp/site-timing.js" antora-playbook.yml
antora_took=$(since "$t")
# stage S: seconds from the mark before S to S's own mark.
stage() { awk -F'\t' -v a="$1" -v b="$2" '$1 == a { ta = $2 } $1 == b { tb = $2 }
                                           END { if (ta && tb) printf "%.1f", tb - ta; else printf "?" }' "$tmp/times.tsv"; }
if [ -s "$tmp/times.tsv" ]; then
  part "Antora: start, content read" "$(stage start aggregated)"
  part "Antora: results rendered" "$(stage aggregated collected)" "the collector's tr4947.results.render, per edition"
  part "Antora: HTML converted" "$(stage collected navigation)" "pages and navigation"
  pdf_note=""
  if [ -s "$tmp/pdfs.tsv" ]; then
    pdf_note=$(awk -F'\t' '{ n[$2]++ } END { printf "%d converted, %d unchanged (from the PDF cache)", n["built"], n["reused"] }' "$tmp/pdfs.tsv")
  fi
  part "Antora: PDFs" "$(stage navigation pdfs)" "$pdf_note"
  part "Antora: pages composed, published" "$(stage pdfs published)" "with the search index"
fi
part "Antora in all" "$antora_took"

pages=$(find build/site/tr4947 -name '*.html' | wc -l)
printf '\nSite built in %ss (%s pages).\n' "$(since "$start")" "$pages"
for p in "${parts[@]}"; do printf '  %s\n' "$p"; done
printf 'Open file://%s/build/site/index.html\n' "$PWD"
if [ "$status" -ne 0 ]; then
  echo "Some chapters failed (see above); their pages show the last complete results and say so." >&2
fi
exit "$status"
