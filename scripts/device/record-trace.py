"""Records a PyTorch memory snapshot by replaying a reference trace's requests on a real GPU.

Run on the device machine (python3 with torch and CUDA), one process per config, because
PYTORCH_CUDA_ALLOC_CONF is read when CUDA starts:

  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 scripts/device/record-trace.py \
      --source tests/fixtures/random-s1__default.pickle.gz --cap 4831838208 --out out.pickle.gz

The requests are the source trace's allocs and frees (torch.empty(size, dtype=uint8) / del), in
order; a request that fails with OOM is skipped, and so is its free. Options put
torch.cuda.empty_cache() after given requests, spread the requests over two CUDA streams, or
over two devices (a second source on cuda:1, interleaved). It prints the manifest entry as JSON.
"""
import argparse
import gzip
import json
import os
import pickle

import torch


def requests_of(path):
    """[(kind, id, size)] from a snapshot's device trace: kind 0 alloc, 1 free."""
    with gzip.open(path, 'rb') as f:
        snap = pickle.load(f)
    out, live, next_id = [], {}, 0
    for e in snap['device_traces'][0]:
        if e['action'] == 'alloc':
            live[e['addr']] = next_id
            out.append((0, next_id, e['size']))
            next_id += 1
        elif e['action'] == 'free_requested':
            out.append((1, live.pop(e['addr']), e['size']))
    return out


def stats_of(device):
    """memory_stats() as the manifest keeps them: the all-pools figures."""
    keep = lambda k: k.startswith('oversize') or ('_pool' not in k and not k.endswith(('.allocated', '.freed')))
    return {k: v for k, v in torch.cuda.memory_stats(device).items() if keep(k)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--source', required=True)
    p.add_argument('--source1', help='a second source, replayed on cuda:1 interleaved with the first')
    p.add_argument('--cap', type=int, required=True,
                   help='bytes, through set_per_process_memory_fraction; 0: no call (a per_process_memory_fraction key sets it)')
    p.add_argument('--empty-cache-after', default='', help='request indices, comma separated')
    p.add_argument('--streams', type=int, default=1, help='1, or 2: request ids alternate between two streams')
    p.add_argument('--out', required=True)
    a = p.parse_args()

    sources = [(0, requests_of(a.source))]
    if a.source1:
        sources.append((1, requests_of(a.source1)))
    empty_after = {int(x) for x in a.empty_cache_after.split(',') if x}
    allowed = {}
    for dev, _ in sources:
        total = torch.cuda.get_device_properties(dev).total_memory
        if a.cap > 0:
            fraction = a.cap / total
            torch.cuda.set_per_process_memory_fraction(fraction, dev)
        else:
            torch.cuda.init()  # the allocator reads its config (a per_process_memory_fraction key) now
            fraction = torch.cuda.memory.get_per_process_memory_fraction(dev)
        allowed[dev] = int(fraction * total) if fraction < 1 else None
        with torch.cuda.device(dev):
            torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks='python')
    streams = [torch.cuda.current_stream(0)] + [torch.cuda.Stream(0) for _ in range(a.streams - 1)]

    live = {}
    ooms = 0
    # Interleave the sources request by request.
    steps = max(len(r) for _, r in sources)
    for i in range(steps):
        for dev, reqs in sources:
            if i >= len(reqs):
                continue
            kind, rid, size = reqs[i]
            key = (dev, rid)
            if kind == 0:
                stream = streams[rid % len(streams)] if dev == 0 else torch.cuda.current_stream(dev)
                try:
                    with torch.cuda.device(dev), torch.cuda.stream(stream):
                        live[key] = torch.empty(size, dtype=torch.uint8, device=f'cuda:{dev}')
                except torch.cuda.OutOfMemoryError:
                    ooms += 1
            else:
                live.pop(key, None)
            if dev == 0 and i in empty_after:
                torch.cuda.empty_cache()
    for dev, _ in sources:
        torch.cuda.synchronize(dev)

    snap = torch.cuda.memory._snapshot()
    with gzip.open(a.out, 'wb') as f:
        pickle.dump(snap, f)
    entry = {
        'file': os.path.basename(a.out),
        'conf': os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''),
        'torch': torch.__version__,
        'source': os.path.basename(a.source),
        'source1': os.path.basename(a.source1) if a.source1 else None,
        'streams': a.streams,
        'empty_cache_after': sorted(empty_after),
        'allowed_memory_maximum': allowed[0],
        'device_total': torch.cuda.get_device_properties(0).total_memory,
        'requests': len(sources[0][1]),
        'ooms': ooms,
        'trace_events': len(snap['device_traces'][0]),
        'stats_at_end': stats_of(0),
    }
    if a.source1:
        entry['stats_at_end_device1'] = stats_of(1)
    print('MANIFEST ' + json.dumps(entry))


if __name__ == '__main__':
    main()
