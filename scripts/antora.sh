#!/usr/bin/env bash
# Antora as `make site`, `make site-only` and the site tests run it: `npx antora ARGS...` with
# scripts/pdf-cache.sh first on the PATH as asciidoctor-pdf, so an edition's PDF whose content
# has not changed is taken from the cache instead of converted again (about 45 s of CPU each).
#   TR4947_PDF_CACHE   where converted PDFs are kept, keyed by their content (default
#                      $TR4947_CACHE/pdf-cache, i.e. ~/.cache/tr4947/pdf-cache: every clone on
#                      this machine shares it, as it shares the Kafka jars)
#   PDF_CACHE=0        convert every edition's PDF, changed or not
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${PDF_CACHE:-1}" != 0 ] && real_pdf=$(command -v asciidoctor-pdf); then
  shim=$(mktemp -d "${TMPDIR:-/tmp}/tr4947-antora.XXXXXX")
  trap 'rm -rf "$shim"' EXIT
  export TR4947_ASCIIDOCTOR_PDF=$real_pdf
  export TR4947_PDF_CACHE=${TR4947_PDF_CACHE:-${TR4947_CACHE:-$HOME/.cache/tr4947}/pdf-cache}
  printf '#!/bin/sh\nexec bash %q "$@"\n' "$PWD/scripts/pdf-cache.sh" > "$shim/asciidoctor-pdf"
  chmod +x "$shim/asciidoctor-pdf"
  PATH="$shim:$PATH"
fi
npx --no-install antora "$@"
