#!/bin/bash
# Records the extra reference traces (see tests/fixtures/MANIFEST.json, "recorded_by") on the device
# machine: expandable_segments under memory pressure, empty_cache, two streams, two devices.
# Usage (device machine, repository root): bash scripts/device/record-all.sh OUTDIR
set -u
out=${1:?output folder}
mkdir -p "$out"
R=tests/fixtures/random-s1__default.pickle.gz
T=tests/fixtures/transformer-s1__default.pickle.gz
GiB=1073741824
rec() { # conf name args...
  local conf=$1 name=$2; shift 2
  PYTORCH_CUDA_ALLOC_CONF=$conf python3 scripts/device/record-trace.py --out "$out/$name.pickle.gz" "$@" \
    | grep '^MANIFEST ' | sed 's/^MANIFEST //' >>"$out/manifest.jsonl" || echo "FAILED $name" >&2
}
python3 -c 'import torch; print(torch.__version__, torch.cuda.device_count(), torch.cuda.get_device_name(0))'
time rec expandable_segments:True 'random-s1__expandable_segments=True__cap4.5GiB' --source $R --cap $((9 * GiB / 2))
rec expandable_segments:True 'transformer-s1__expandable_segments=True__cap5GiB' --source $T --cap $((5 * GiB))
rec expandable_segments:True,max_split_size_mb:128 'random-s1__expandable_segments=True+max_split_size_mb=128__cap4.5GiB' --source $R --cap $((9 * GiB / 2))
rec expandable_segments:True,garbage_collection_threshold:0.6 'transformer-s1__expandable_segments=True+garbage_collection_threshold=0.6__cap5GiB' --source $T --cap $((5 * GiB))
rec '' 'random-s1__default__empty_cache' --source $R --cap $((6 * GiB)) --empty-cache-after 5000,12000,12001
rec expandable_segments:True 'transformer-s1__expandable_segments=True__empty_cache' --source $T --cap $((6 * GiB)) --empty-cache-after 5000,12000
rec '' 'random-s1__default__two_streams' --source $R --cap $((6 * GiB)) --streams 2
if python3 -c 'import torch,sys; sys.exit(torch.cuda.device_count() < 2)'; then
  rec '' 'random-s1+transformer-s1__default__two_devices' --source $R --source1 $T --cap $((6 * GiB))
fi
ls -la "$out"
