#!/usr/bin/env bash
# Commit what a long evaluation has written so far and git carries (see .gitignore): the
# runs' answer journals, each construction key's batch journal and the kept (sealed) model
# replies. Only these paths are committed; other staged work stays staged.
# Run it a few times per run: every two hours while it goes on and once before a sitting
# ends (while sleep 7200; do <this>; done), not answer by answer.
set -uo pipefail
cd "$(dirname "$0")/.."
paths=()
for p in eval-results/locomo-long*/journal.jsonl eval-results/construction*/replies.jsonl \
         eval-results/construction*/openai-replies.jsonl eval-results/construction*/*/ingest.jsonl; do
  [ -e "$p" ] && paths+=("$p")
done
[ ${#paths[@]} -eq 0 ] && exit 0
git add -- "${paths[@]}"
git diff --cached --quiet -- "${paths[@]}" && exit 0
answers=$(cat eval-results/locomo-long*/journal.jsonl 2>/dev/null | grep -c '"kind":"answer"')
batches=$(cat eval-results/construction*/*/ingest.jsonl 2>/dev/null | wc -l)
git commit -q -m "Long run journals: $answers answers, $batches built batches" -- "${paths[@]}"
