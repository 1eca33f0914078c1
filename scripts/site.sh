#!/usr/bin/env bash
# The main job behind `make site`: run every notebook on the target (default: the embedded
# lab; cached, so unchanged notebooks are skipped), embed the results, build the guide, and
# say where to open it. TARGET=<inventory> and FORCE=1 are honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
args=(--target "${TARGET:-lab}")
[ -n "${FORCE:-}" ] && args+=(--force)
echo "== runbook: notebooks on target ${TARGET:-lab}"
status=0
.venv/bin/python -m tr4947.runbook "${args[@]}" || status=$?
echo "== site: Antora build"
npx --no-install antora antora-playbook.yml
pages=$(find build/site/tr4947 -name '*.html' | wc -l)
printf '\nSite built in %ss (%s pages).\nOpen file://%s/build/site/index.html\n' \
  "$(( $(date +%s) - start ))" "$pages" "$PWD"
if [ "$status" -ne 0 ]; then
  echo "Some notebooks failed (see above); their pages show the last good results." >&2
fi
exit "$status"
