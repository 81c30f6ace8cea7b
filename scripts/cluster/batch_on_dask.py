"""Runs `splitscope batch` on a Dask distributed cluster: N shards of the inputs (--shard I/N, the
same deterministic split the CLI makes), each a task that runs the CLI on whichever worker takes it
and returns its rows; the rows are gathered into one results file. The cluster is an existing one
(--scheduler tcp://host:8786) or a LocalCluster made here (--local WORKERS, as the test suite does).
Each worker needs the inputs at the same paths (a shared filesystem) and node with a splitscope
checkout (--splitscope, default: this one).

  python3 scripts/cluster/batch_on_dask.py --local 2 --shards 4 --out results.jsonl \\
      --conf expandable_segments:True --conf max_split_size_mb:128 DUMPS/
  python3 scripts/cluster/batch_on_dask.py --scheduler tcp://10.0.0.5:8786 --shards 64 ...
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_shard(splitscope, inputs, confs, capacity, shard, shards):
    """One shard on this worker: its rows, as dicts (a file that cannot be read is an error row)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'rows.jsonl')
        cmd = ['node', os.path.join(splitscope, 'bin', 'splitscope.mjs'), 'batch', *inputs, '--out', out,
               '--shard', f'{shard}/{shards}', '--workers', '1']
        for c in confs:
            cmd += ['--conf', c]
        if capacity:
            cmd += ['--capacity', capacity]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f'shard {shard}/{shards}: {r.stderr.strip()}')
        with open(out) as f:
            return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('inputs', nargs='+')
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument('--scheduler', help='address of a running Dask scheduler')
    where.add_argument('--local', type=int, metavar='WORKERS', help='a LocalCluster of this many worker processes')
    p.add_argument('--shards', type=int, required=True)
    p.add_argument('--conf', action='append', default=[])
    p.add_argument('--capacity')
    p.add_argument('--out', required=True)
    p.add_argument('--splitscope', default=os.path.dirname(os.path.dirname(HERE)))
    a = p.parse_args()
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=a.local, threads_per_worker=1, processes=True, dashboard_address=None) if a.local else None
    client = Client(cluster if cluster else a.scheduler)
    try:
        inputs = [os.path.abspath(i) for i in a.inputs]
        futures = [client.submit(run_shard, a.splitscope, inputs, a.conf, a.capacity, i, a.shards, pure=False) for i in range(a.shards)]
        rows = [row for f in futures for row in f.result()]
    finally:
        client.close()
        if cluster:
            cluster.close()
    rows.sort(key=lambda r: (r['file'], json.dumps(r['conf'])))
    with open(a.out, 'w') as f:
        for r in rows:
            f.write(json.dumps(r) + '\n')
    print(f'{len(rows)} rows from {a.shards} shards written to {a.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
