#!/usr/bin/env python3
"""Write a large, realistic memory-snapshot pickle for import benchmarks.

Takes a real snapshot (by default train_gpt2-n150__default from ../shared/traces or
tests/fixtures) and repeats its device trace until the pickle reaches the size asked for, the
way a longer training run repeats its steps: every copy gets later time stamps, fresh dicts
and fresh action strings (so the pickle has as many objects as a real one of that length),
while stack frames stay shared, as torch shares them. The result has a valid snapshot shape;
a replay of it is not meaningful (its copies allocate the same addresses again).

    python3 bench/make-big-pickle.py [--mb 100] [--source FILE.pickle.gz] OUT.pickle[.gz]
"""

import argparse
import gzip
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'train_gpt2-n150__default.pickle.gz'
CANDIDATES = [
    os.path.join(HERE, '..', 'tests', 'fixtures', NAME),
    os.path.join(HERE, '..', '..', 'shared', 'traces', NAME),
]


def fresh(s):
    # A new str object with the same text: pickle memoizes by identity, and torch writes a
    # separate action string per entry, so copies must not share one.
    return s.encode().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out', help='output path; .gz compresses it')
    ap.add_argument('--mb', type=float, default=100, help='target pickle size in MB (1e6 bytes)')
    ap.add_argument('--source', help='snapshot to repeat (.pickle or .pickle.gz)')
    args = ap.parse_args()

    source = args.source or next((p for p in CANDIDATES if os.path.exists(p)), None)
    if source is None:
        sys.exit('make-big-pickle: no source snapshot found; pass --source')
    opener = gzip.open if source.endswith('.gz') else open
    with opener(source, 'rb') as f:
        raw = f.read()
    snapshot = pickle.loads(raw)

    trace = snapshot['device_traces'][0]
    if not trace:
        sys.exit('make-big-pickle: the source has an empty trace')
    span = trace[-1].get('time_us', 0) - trace[0].get('time_us', 0) + 1

    def repeated(count):
        out, copy = [], 0
        while len(out) < count:
            for e in trace:
                if len(out) >= count:
                    break
                d = dict(e)
                d['action'] = fresh(e['action'])
                if 'time_us' in d:
                    d['time_us'] = e['time_us'] + copy * span
                out.append(d)
            copy += 1
        return out, copy

    def size_with(entries):
        snapshot['device_traces'][0] = entries
        return len(pickle.dumps(snapshot, protocol=4))

    # Copies cost less per entry than the original (their frames are shared by then), and
    # the cost drifts with the memo's size: estimate, dump, and correct once if far off.
    target = args.mb * 1e6
    base = size_with([])
    count = max(1, int(len(trace) * (target - base) / (len(raw) - base)))
    for _ in range(3):
        out_trace, copy = repeated(count)
        snapshot['device_traces'][0] = out_trace
        data = pickle.dumps(snapshot, protocol=4)  # what torch.cuda.memory._dump_snapshot writes
        if abs(len(data) - target) < 0.02 * target:
            break
        count = max(1, int(count * (target - base) / (len(data) - base)))

    if args.out.endswith('.gz'):
        with gzip.open(args.out, 'wb', compresslevel=6) as f:
            f.write(data)
    else:
        with open(args.out, 'wb') as f:
            f.write(data)
    print(f'{args.out}: {len(data) / 1e6:.1f} MB pickle, {len(out_trace)} trace entries '
          f'({copy} copies of {os.path.basename(source)})')


if __name__ == '__main__':
    main()
