#!/usr/bin/env bash
# The second long LoCoMo run, resumed from its committed journals: each step skips what
# its journal holds. Settings, step order and the run's notes: README.md beside this file.

set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${DATA:-../shared/data/locomo/locomo10.json}
PY=.venv/bin/python

freeze() {  # a frozen copy of one commit, importable as `lamina`
  local dir=/tmp/lamina-at-$1
  if [ ! -d "$dir/lamina" ]; then
    mkdir -p "$dir/lamina"
    git archive "$1" | tar -x -C "$dir/lamina"
  fi
  echo "$dir"
}

run=(--data "$DATA" --adversarial 10 --context-window 8192 --conversations conv-26 conv-30
     --local-ctx 32768 --pick balanced --questions 65 --threads 2)

PYTHONPATH=$(freeze 1936587) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir /tmp/construction-long2-baselines --systems flat oracle
LAMINA=838c874  # was 31ff522, then 4e01a76 (29 November, session 36)
redo=()
if [ "$(grep -c '"kind":"redo"' eval-results/locomo-long-2/journal.jsonl)" -lt 6 ]; then
  redo=(--redo lamina lamina-retrieval)  # once: the answers at 4e01a76 are set aside
  for key in eval-results/construction-long2/lamina-*/; do
    rm -rf "${key}chroma" "${key}built.jsonl"  # the local store only; ingest.jsonl stays
  done
fi
PYTHONPATH=$(freeze $LAMINA) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir eval-results/construction-long2 --systems lamina lamina-retrieval "${redo[@]}"
PYTHONPATH=$(freeze $LAMINA) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir eval-results/construction-long2 \
  --interim --systems lamina lamina-retrieval flat oracle
PYTHONPATH=$(freeze 1936587) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir /tmp/construction-long2-baselines --systems derived-oracle
LAMINA_TIMEOUT=1800 PYTHONPATH=$(freeze eef1dca) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-peers \
  --construction-dir eval-results/construction --systems mem0 langmem
PYTHONPATH=$(freeze $LAMINA) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir eval-results/construction-long2 --merge-from eval-results/locomo-long-peers \
  --interim --systems lamina lamina-retrieval flat oracle derived-oracle mem0 langmem
