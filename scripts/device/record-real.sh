#!/bin/bash
# Records the reference traces of issue 12 on the device machine (repository root; OUT: where the tarball
# goes): the allocator keys new in torch 2.11 (large_segment_size_mb, per_process_memory_fraction) on the
# requests of random-s1 and transformer-s1, real workloads of ../shared/tools/record-real-workloads.py
# (copied to scratch/, which the device call carries), and scripts/device/record-extra.py's.
set -u
out=$(mktemp -d)
GiB=1073741824
R=tests/fixtures/random-s1__default.pickle.gz
T=tests/fixtures/transformer-s1__default.pickle.gz
python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0))'
rec() { # conf name args...
  local conf=$1 name=$2; shift 2
  PYTORCH_CUDA_ALLOC_CONF=$conf python3 scripts/device/record-trace.py --out "$out/$name.pickle.gz" "$@" \
    | grep '^MANIFEST ' | sed 's/^MANIFEST //' >"$out/$name.json" || echo "FAILED $name" >&2
}
real() { # workload conf
  PYTORCH_CUDA_ALLOC_CONF=$2 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 scratch/record-real-workloads.py one "$1" "$2" "$out" || echo "FAILED $1 $2" >&2
}
rec large_segment_size_mb:40 'random-s1__large_segment_size_mb=40' --source $R --cap $((6 * GiB)) &
rec large_segment_size_mb:12,max_split_size_mb:12 'transformer-s1__large_segment_size_mb=12+max_split_size_mb=12' --source $T --cap $((6 * GiB)) &
rec expandable_segments:True,large_segment_size_mb:40 'random-s1__expandable_segments=True+large_segment_size_mb=40__cap4.5GiB' --source $R --cap $((9 * GiB / 2)) &
rec per_process_memory_fraction:0.04 'random-s1__per_process_memory_fraction=0.04' --source $R --cap 0 &
rec per_process_memory_fraction:0.04,garbage_collection_threshold:0.6 'transformer-s1__per_process_memory_fraction=0.04+garbage_collection_threshold=0.6' --source $T --cap 0 &
wait
real llama '' &
real prefetch max_split_size_mb:128 &
real oom expandable_segments:True &
real oom garbage_collection_threshold:0.6,max_split_size_mb:256 &
python3 scripts/device/record-extra.py all "$out" &
wait
ls -la "$out"
tar czf "$OUT/recordings.tgz" -C "$out" .
