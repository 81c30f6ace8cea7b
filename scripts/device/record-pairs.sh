#!/bin/bash
# Records, on the device machine, the default-config partners of the what-if recordings that
# scripts/device/record-real.sh made (same SEED as those: record-real-workloads.py's default), so each
# what-if has a pair; the prefetch workload twice, to see how much its record_stream timing varies
# from run to run. OUT: where the tarball goes.
set -u
out=$(mktemp -d)
for run in a b; do
  mkdir -p "$out/$run"
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 scratch/record-real-workloads.py one prefetch '' "$out/$run" &
done
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 scratch/record-real-workloads.py one oom '' "$out/a" &
wait
ls -laR "$out"
tar czf "$OUT/pairs.tgz" -C "$out" .
