"""Writes the bad-input snapshots of tests/fixtures/bad/ from a real one (tests/fixtures/real/graphs.pickle.gz),
pickled by Python as torch.cuda.memory._dump_snapshot pickles (protocol 4, memoized): the reader's fast path
reads them as it reads PyTorch's files, so its checks are the ones tested.

  python3 scripts/make-bad-inputs.py
"""
import copy, gzip, os, pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'tests', 'fixtures', 'bad')
base = pickle.load(gzip.open(os.path.join(HERE, '..', 'tests', 'fixtures', 'real', 'graphs.pickle.gz')))


def write(name, snap):
    with open(os.path.join(OUT, name), 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=9, mtime=0) as f:
        pickle.dump(snap, f, protocol=4)


# An alloc with a negative size (the first alloc of the trace).
s = copy.deepcopy(base)
t = s['device_traces'][0]
first = next(i for i, e in enumerate(t) if e['action'] == 'alloc')
t[first]['size'] = -4096
write('negative-alloc-size.pickle.gz', s)

# A free (requested and completed) of an address no segment ever held, before the first free of the trace.
s = copy.deepcopy(base)
t = s['device_traces'][0]
at = next(i for i, e in enumerate(t) if e['action'] == 'free_requested')
stray = dict(t[at], addr=0x1234500000)
t[at:at] = [dict(stray, action='free_requested'), dict(stray, action='free_completed')]
write('free-never-held.pickle.gz', s)
print('first alloc at', first, '; stray free at', at)
