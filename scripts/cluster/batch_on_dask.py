#!/usr/bin/python3
"""Runs `splitscope batch` on a Dask distributed cluster: N shards of the inputs (--shard I/N, the
same deterministic split the CLI makes), each a task that runs the CLI on whichever worker takes it
and returns its rows; the rows are gathered into one results file. The cluster is an existing one
(--scheduler tcp://host:8786) or a LocalCluster made here (--local WORKERS, as the test suite does).

The interpreter is Debian's /usr/bin/python3, the one its python3-distributed package is installed
for (hence the first line): not whichever python3 is first on PATH (a virtualenv's, pyenv's or
conda's lacks `distributed`, or has another version of it than the scheduler's). Run it as
`/usr/bin/python3 scripts/cluster/batch_on_dask.py ...` or as `scripts/cluster/batch_on_dask.py ...`.
Each Dask worker needs the inputs at the same paths (a shared filesystem), Node 20 (--node, default:
`node` on the worker's PATH) and a built splitscope checkout at the same path (--splitscope, default:
this one; `npm ci && npm run build` there, or `node scripts/build-cli.mjs`).

Nothing is lost and a rerun redoes only what is missing: each shard's rows, as it finishes (or as far
as it got, where it failed), are kept in OUT.parts/shard-I-of-N.jsonl beside --out; a rerun with the
same --shards gives each shard its rows back (the CLI does not make a row twice), so only what is
missing is computed. --out is written (a temporary file renamed into place) with every row so far,
also when a shard failed; the failed shards are named on stderr and the exit status is 1. An --out
that exists and is not a results file of splitscope batch is refused (exit 2) and left as it was;
its rows, where it is one, are kept in the new one.

  /usr/bin/python3 scripts/cluster/batch_on_dask.py --local 2 --shards 4 --out results.jsonl \\
      --conf expandable_segments:True --conf max_split_size_mb:128 DUMPS/
  /usr/bin/python3 scripts/cluster/batch_on_dask.py --scheduler tcp://10.0.0.5:8786 --shards 64 ...
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class NotResults(Exception):
    pass


def row_problem(v):
    """Why `v` (a parsed results line) is not a row of splitscope batch; None where it is one
    (src/trace/batch/batch-rows.ts, batchRowProblem, says the same)."""
    if not isinstance(v, dict):
        return 'not a JSON object'
    if not isinstance(v.get('file'), str) or v['file'] == '':
        return 'a JSON object with no file'
    if 'conf' not in v or not (v['conf'] is None or isinstance(v['conf'], str)):
        return 'a JSON object with no conf: a config or null'
    if not isinstance(v.get('ok'), bool):
        return 'a JSON object with no ok'
    if v['ok'] and (not isinstance(v.get('requests'), (int, float)) or not isinstance(v.get('outcome'), str)):
        return 'an ok row with no requests or outcome'
    if not v['ok'] and not isinstance(v.get('error'), str):
        return 'an error row with no error'
    return None


def rows_of(text, name):
    """The rows of a results file's text; a last line cut short by a kill (no newline after it, the
    start of a row) is left out; any other line that is not a row raises NotResults."""
    lines = text.split('\n')
    rows = []
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            v = json.loads(line)
        except ValueError:
            compact = line.lstrip('{').lstrip()
            if k == len(lines) - 1 and line.startswith('{') and ('"file"'.startswith(compact) or compact.startswith('"file"')):
                break
            raise NotResults(f'{name}, line {k + 1}: not a row of splitscope batch (not JSON)')
        why = row_problem(v)
        if why:
            raise NotResults(f'{name}, line {k + 1}: not a row of splitscope batch ({why})')
        rows.append(v)
    return rows


def key(r):
    return (r['file'], json.dumps(r['conf']))


def dump(rows):
    """Rows as the CLI writes them: compact JSON, one a line."""
    return ''.join(json.dumps(r, separators=(',', ':'), ensure_ascii=False) + '\n' for r in rows)


def write_whole(path, text):
    """`text` to `path` through a temporary file beside it, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix='.splitscope-', suffix='.tmp')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run_shard(node, splitscope, inputs, confs, capacity, shard, shards, seed):
    """One shard on this worker, given the rows it made before (`seed`, results text): the CLI makes
    the missing ones. Returns what it has, also where the CLI failed: a file that cannot be read is an
    error row, not a failure; a failure is the CLI stopping (exit status not 0)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'rows.jsonl')
        with open(out, 'w', encoding='utf-8') as f:
            f.write(seed)
        cmd = [node, os.path.join(splitscope, 'bin', 'splitscope.mjs'), 'batch', *inputs, '--out', out,
               '--shard', f'{shard}/{shards}', '--workers', '1']
        for c in confs:
            cmd += ['--conf', c]
        if capacity:
            cmd += ['--capacity', capacity]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            code, err = r.returncode, r.stderr
        except OSError as e:  # no node there
            code, err = 127, f'{node}: {e}'
        with open(out, encoding='utf-8', errors='replace') as f:
            text = f.read()
        try:
            rows = rows_of(text, f'shard {shard}/{shards}')
        except NotResults as e:
            rows, code, err = [], code or 70, f'{err}\n{e}'
        todo = next((l for l in err.splitlines() if ' files to do' in l), '')
        return {'shard': shard, 'code': code, 'error': err.strip(), 'rows': rows, 'todo': todo.split('; ')[-1]}


def fail(message):
    print(f'batch_on_dask: {message}', file=sys.stderr)
    sys.exit(2)


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
    p.add_argument('--splitscope', default=os.path.dirname(os.path.dirname(HERE)), help='a built splitscope checkout, at this path on every worker')
    p.add_argument('--node', default='node', help='Node 20 on the workers (default: node on their PATH)')
    a = p.parse_args()
    if a.shards < 1:
        fail(f'--shards takes a whole number above 0, not {a.shards}')

    # --out checked before any work: its folder, and what is in it now (kept, or refused untouched).
    out = a.out
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        fail(f'cannot write {out}: its folder {os.path.dirname(out) or "."} does not exist')
    before = []
    if os.path.lexists(out):
        if not os.path.isfile(out):
            fail(f'cannot write {out}: it is not a regular file')
        try:
            with open(out, encoding='utf-8', errors='replace') as f:
                before = rows_of(f.read(), out)
        except NotResults as e:
            fail(f'{e}. --out takes a results file of splitscope batch; {out} is left as it was')
        except OSError as e:
            fail(f'cannot read {out}: {e.strerror}')
    parts = out + '.parts'
    os.makedirs(parts, exist_ok=True)
    part = lambda i: os.path.join(parts, f'shard-{i}-of-{a.shards}.jsonl')
    seeds = {}
    for i in range(a.shards):
        try:
            with open(part(i), encoding='utf-8', errors='replace') as f:
                seeds[i] = dump(rows_of(f.read(), part(i)))
        except FileNotFoundError:
            seeds[i] = ''
        except NotResults as e:
            fail(f'{e}: remove it to make that shard again')

    from dask.distributed import Client, LocalCluster, as_completed
    cluster = LocalCluster(n_workers=a.local, threads_per_worker=1, processes=True, dashboard_address=None) if a.local else None
    client = Client(cluster if cluster else a.scheduler)
    failed = {}
    try:
        inputs = [os.path.abspath(i) for i in a.inputs]
        futures = [client.submit(run_shard, a.node, a.splitscope, inputs, a.conf, a.capacity, i, a.shards, seeds[i], pure=False)
                   for i in range(a.shards)]
        shard_of = {f.key: i for i, f in enumerate(futures)}
        for f in as_completed(futures):
            i = shard_of[f.key]
            try:
                done = f.result()
            except Exception as e:  # the task itself failed (its worker died): its rows so far stay in its part
                failed[i] = f'{type(e).__name__}: {e}'
                continue
            # Kept as soon as it is back, whole or as far as it got.
            write_whole(part(i), dump(done['rows']))
            if done['code'] != 0:
                failed[i] = f"splitscope batch exited {done['code']}: {done['error'][-2000:]}"
            else:
                print(f"shard {i}/{a.shards}: {done['todo'] or 'done'}", file=sys.stderr)
    finally:
        client.close()
        if cluster:
            cluster.close()

    # Every row so far: the earlier --out's, then each shard's (a shard's newer row replaces an earlier one).
    rows = {key(r): r for r in before}
    for i in range(a.shards):
        if os.path.exists(part(i)):
            with open(part(i), encoding='utf-8', errors='replace') as f:
                for r in rows_of(f.read(), part(i)):
                    rows[key(r)] = r
    merged = [rows[k] for k in sorted(rows)]
    write_whole(out, dump(merged))
    print(f'{len(merged)} rows from {a.shards} shards written to {out} (each shard\'s also in {parts}/)', file=sys.stderr)
    if failed:
        for i in sorted(failed):
            print(f'shard {i}/{a.shards} failed: {failed[i]}', file=sys.stderr)
        print(f'{len(failed)} of {a.shards} shards failed (their rows so far are kept): run the same command again to make only what is missing',
              file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
