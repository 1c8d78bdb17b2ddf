#!/usr/bin/env bash
# The long LoCoMo run, resumed from its committed journals. Every step skips what its
# journal already holds, so this script is run again, unchanged, at the start of every
# sitting until it ends; commit the journals as they grow (see docs/benchmarks/locomo.md).
#
# The order (changed on 27 November, when lamina had 119 and lamina-retrieval 75 of their
# 150 answers at 3ae8457): what will not change first, lamina last.
#   1. the peers, mem0 and LangMem, pinned to eef1dca (their construction is journaled
#      and its replies kept under eval-results/construction; LangMem's snapshot stays
#      local, so LangMem is built again on a new machine). The longest step (hours).
#   2. flat, oracle and derived-oracle, with the code their first answers came from
#      (1936587); their stores need no model and stay machine-local.
#   3. lamina and lamina-retrieval, pinned to 3ae8457: issue 31's construction checks as
#      built (a note told in its turn's voice, episode titles by whose things they name,
#      a turn restated twice kept once) over the same model requests as faaebf2's build
#      (the same key). Their answers at 2baa866 (92 of lamina's) were set aside with
#      `--redo lamina lamina-retrieval` on 26 November, once; the local store was
#      rebuilt from eval-results/construction-long2/replies.jsonl (the batch journal keeps
#      the first build's costs; the update checks whose pairs changed ask the model).
#      When issue 31's next build is done, this step is pinned to it and redone once.
#   4. the report, with lamina's code of step 3 (its construction key finds the batch
#      journal), the peers' answers joined in (--merge-from). --interim builds and
#      answers nothing (no model loads, no peer store is built here) and scores the
#      questions every system answered: all of them, once steps 1-3 are done.
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

PYTHONPATH=$(freeze eef1dca) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-peers \
  --construction-dir eval-results/construction --systems mem0 langmem
PYTHONPATH=$(freeze 1936587) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir /tmp/construction-long2-baselines --systems flat oracle derived-oracle
PYTHONPATH=$(freeze 3ae8457) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir eval-results/construction-long2 --systems lamina lamina-retrieval
PYTHONPATH=$(freeze 3ae8457) $PY -m lamina eval "${run[@]}" --out eval-results/locomo-long-2 \
  --construction-dir eval-results/construction-long2 --merge-from eval-results/locomo-long-peers \
  --interim --systems lamina lamina-retrieval flat oracle derived-oracle mem0 langmem
