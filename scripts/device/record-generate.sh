#!/bin/bash
# Records the 'generate' trace of issue 13's speed table on the device machine (repository root; OUT:
# where it goes): ../shared/tools/record-real-workloads.py's generate workload (copied to scratch/, which
# the device call carries) under seeds 1-6 at once, the largest trace kept as
# tests/fixtures/real/generate__default__seed6.pickle.gz was (seed 6: 786,349 events, 91 MB uncompressed).
set -u
for s in 1 2 3 4 5 6; do
  mkdir -p "/tmp/generate-$s"
  SEED=$s HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 scratch/record-real-workloads.py one generate '' "/tmp/generate-$s" &
done
wait
best=$(for s in 1 2 3 4 5 6; do
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['trace_events'], sys.argv[2])" "/tmp/generate-$s/generate__default.json" "$s"
done | sort -n | tail -1 | cut -d' ' -f2)
cp "/tmp/generate-$best/generate__default.pickle.gz" "$OUT/generate__default__seed$best.pickle.gz"
cp "/tmp/generate-$best/generate__default.json" "$OUT/generate__default__seed$best.json"
