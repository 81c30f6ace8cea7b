#!/bin/bash
# splitscope batch's throughput where there are more cores than here (the device: 16): the fleet of
# bench/batch.bench.ts (120 copies of six real recordings, 3 configs) with 1, 2, 4 and 8 worker
# threads, end to end in the CLI. Needs node and the built CLI (carry build/cli). The figures go to
# bench/results/h100-batch.json, which `npm run bench -- batch` prints beside its own.
# Usage (repository root): bash scripts/device/batch-throughput.sh OUTDIR
set -eu
out=${1:?output folder}
fleet=$out/fleet
mkdir -p "$fleet"
src=(real/oom__default real/vit_oom__default real/prefetch__default 'real/lss40__large_segment_size_mb=40' real/phases job/rank_1)
for k in $(seq 0 119); do cp "tests/fixtures/${src[$((k % 6))]}.pickle.gz" "$fleet/job-$k.pickle.gz"; done
echo "cores: $(nproc), node $(node -v)"
for w in 1 2 4 8 1 2 4 8; do
  rm -f "$out/rows.jsonl"
  t0=$(date +%s.%N)
  node bin/splitscope.mjs batch "$fleet" --conf expandable_segments:True --conf max_split_size_mb:128 \
    --conf garbage_collection_threshold:0.6,max_split_size_mb:256 --out "$out/rows.jsonl" --workers $w >/dev/null
  t1=$(date +%s.%N)
  python3 -c "print('workers $w: %.2f s, %d rows' % ($t1 - $t0, sum(1 for _ in open('$out/rows.jsonl'))))"
done
