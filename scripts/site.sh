#!/usr/bin/env bash
# The main job behind `make site`: run the chapters whose inputs changed since their committed
# results on the target (default: the embedded lab), render every result into the guide,
# build it, and say where to open it.
#   TARGET=<inventory>   run on that target (results land under results/<target>/)
#   CHAPTERS="a b"       run these chapters even if they are up to date
#   FORCE=1              run every chapter
#   CONFIRM=1            let state-changing steps run on a real target (default: a dry run)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
args=(--target "${TARGET:-lab}")
[ -n "${FORCE:-}" ] && args+=(--force)
[ -n "${CONFIRM:-}" ] && args+=(--confirm)
# shellcheck disable=SC2206
[ -n "${CHAPTERS:-}" ] && args+=(${CHAPTERS})
echo "== runbook: chapters on target ${TARGET:-lab}"
status=0
.venv/bin/python -m tr4947.runbook "${args[@]}" || status=$?
echo "== site: Antora build (results rendered from results/)"
npx --no-install antora antora-playbook.yml
pages=$(find build/site/tr4947 -name '*.html' | wc -l)
printf '\nSite built in %ss (%s pages).\nOpen file://%s/build/site/index.html\n' \
  "$(( $(date +%s) - start ))" "$pages" "$PWD"
if [ "$status" -ne 0 ]; then
  echo "Some chapters failed (see above); their pages show the last complete results and say so." >&2
fi
exit "$status"
