#!/usr/bin/env python3
"""Record what torch (2.11) does with each PYTORCH_CUDA_ALLOC_CONF string of a corpus.

usage: python3 record-conf-verdicts.py OUT.json [--corpus conf-corpus.json] [--jobs 8] [--timeout 60]

For each string a fresh python3 child runs with PYTORCH_CUDA_ALLOC_CONF set to it (and
PYTORCH_ALLOC_CONF / PYTORCH_HIP_ALLOC_CONF removed), imports torch, initializes CUDA and
allocates torch.empty(1, device='cuda'). The parent writes one JSON list, in corpus order, to OUT.json.

Each result: conf, accepted (no exception during import / torch.cuda.init() / the small allocation),
stage (where it failed: import, init, alloc; crash:<stage> when the child died there without a
Python exception, e.g. std::terminate inside `import torch`; timeout; null when accepted), exc_type, error (first line of the exception, or of the crash message),
oom (the failure was an OutOfMemoryError: the string parsed but the allocation was refused),
warnings (every stdout/stderr line containing 'Warning'/'warning', plus Python warnings),
returncode, and when accepted: allocator_settings (torch.cuda.memory._snapshot()['allocator_settings'],
absent if missing), per_process_memory_fraction (get_per_process_memory_fraction(0), if it exists),
max_split_size (memory_stats()['max_split_size']), reserved_after_small, and a probe of the segment
a 5 MiB request gets (probe_5mib_segment: reserved bytes added by it; shows large_segment_size),
and late_error: an exception from a later pin_memory() call (with backend:cudaMallocAsync torch 2.11
validates the config only when something first reads it, so such strings pass the CUDA init).
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

MARK = '@@CONF-RESULT@@'
STAGE = '@@CONF-STAGE@@'

CHILD = r'''
import json, sys, warnings
MARK = %r
STAGE = %r
warnings.simplefilter("always")
res = {"accepted": False, "stage": "import"}
caught = []
def stage(name):
    res["stage"] = name
    print(STAGE + name, flush=True)
def first_line(e):
    s = str(e).strip()
    return s.splitlines()[0] if s else ""
def emit():
    res["py_warnings"] = [first_line(w.message) for w in caught]
    print(MARK + json.dumps(res, default=str), flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        stage("import")
        import torch
        res["torch_version"] = torch.__version__
        stage("init")
        torch.cuda.init()
        stage("alloc")
        x = torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        res["stage"] = None
        res["accepted"] = True
        print(STAGE + "done", flush=True)
    except BaseException as e:
        res["exc_type"] = type(e).__module__ + "." + type(e).__name__
        res["error"] = first_line(e)
        res["oom"] = "OutOfMemoryError" in type(e).__name__
    if res["accepted"]:
        import torch
        try:
            snap = torch.cuda.memory._snapshot()
            if isinstance(snap, dict) and "allocator_settings" in snap:
                res["allocator_settings"] = snap["allocator_settings"]
        except BaseException as e:
            res["snapshot_error"] = first_line(e)
        for mod in (torch.cuda.memory, torch.cuda):
            if hasattr(mod, "get_per_process_memory_fraction"):
                try:
                    res["per_process_memory_fraction"] = mod.get_per_process_memory_fraction(0)
                except BaseException as e:
                    res["per_process_memory_fraction_error"] = first_line(e)
                break
        try:
            stats = torch.cuda.memory_stats()
            res["max_split_size"] = stats.get("max_split_size")
            res["reserved_after_small"] = torch.cuda.memory_reserved()
        except BaseException as e:
            res["memory_stats_error"] = first_line(e)
    emit()
    if res["accepted"]:
        # Extra probe, after the main line is out (a crash here loses only the probe).
        probe = {}
        try:
            before = torch.cuda.memory_reserved()
            y = torch.empty(5 * 1024 * 1024, dtype=torch.uint8, device="cuda")
            torch.cuda.synchronize()
            probe["probe_5mib_segment"] = torch.cuda.memory_reserved() - before
        except BaseException as e:
            probe["probe_5mib_error"] = type(e).__name__ + ": " + first_line(e)
        # With backend:cudaMallocAsync the config is only validated when something first reads it
        # (e.g. the pinned-memory allocator), not at CUDA init: report that too.
        try:
            torch.empty(16).pin_memory()
            torch.cuda.synchronize()
            probe["late_error"] = None
        except BaseException as e:
            probe["late_error"] = type(e).__name__ + ": " + first_line(e)
        print(MARK + json.dumps(probe, default=str), flush=True)
''' % (MARK, STAGE)


def warning_lines(text):
    return [ln.strip() for ln in text.splitlines()
            if 'warning' in ln.lower() and MARK not in ln and STAGE not in ln]


def crash_line(stderr):
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for key in ('what():', 'Error', 'error', 'terminate called'):
        for ln in lines:
            if key in ln:
                return ln
    return lines[-1] if lines else ''


def excerpt(text, head=1200, tail=400):
    lines = [ln for ln in text.splitlines() if not ln.startswith('frame #')]
    text = '\n'.join(lines)
    return text if len(text) <= head + tail else text[:head] + '\n...\n' + text[-tail:]


def run_one(conf, timeout):
    env = dict(os.environ)
    for name in ('PYTORCH_ALLOC_CONF', 'PYTORCH_HIP_ALLOC_CONF'):
        env.pop(name, None)
    env['PYTORCH_CUDA_ALLOC_CONF'] = conf
    env['PYTHONUNBUFFERED'] = '1'
    env['PYTHONWARNINGS'] = 'always'
    out = {'conf': conf}
    try:
        p = subprocess.run([sys.executable, '-c', CHILD], env=env, capture_output=True,
                           timeout=timeout, text=True, errors='replace')
    except subprocess.TimeoutExpired as e:
        def txt(b):
            return b.decode('utf-8', 'replace') if isinstance(b, bytes) else (b or '')
        out.update(accepted=False, stage='timeout', error='timed out after %d s' % timeout,
                   warnings=warning_lines(txt(e.stdout) + '\n' + txt(e.stderr)), returncode=None)
        return out
    except Exception as e:  # never let one child break the run
        out.update(accepted=False, stage='harness', error='%s: %s' % (type(e).__name__, e), returncode=None)
        return out
    parsed = []
    last_stage = None
    for ln in p.stdout.splitlines():
        if ln.startswith(STAGE):
            last_stage = ln[len(STAGE):].strip()
        elif ln.startswith(MARK):
            try:
                parsed.append(json.loads(ln[len(MARK):]))
            except ValueError:
                pass
    for d in parsed:
        out.update(d)
    out['returncode'] = p.returncode
    warns = warning_lines(p.stdout) + warning_lines(p.stderr)
    for w in out.pop('py_warnings', []) or []:
        if w and not any(w in x for x in warns):
            warns.append(w)
    out['warnings'] = warns
    if not parsed:
        # No result line: the child died (e.g. std::terminate during `import torch`, SIGABRT = -6).
        out.update(accepted=False, stage='crash:%s' % (last_stage or 'startup'), error=crash_line(p.stderr))
        out['stderr_excerpt'] = excerpt(p.stderr)
    elif p.returncode != 0:
        # The main line came out, then the process died (e.g. in the probe or at exit).
        out['exit_problem'] = crash_line(p.stderr)
        out['stderr_excerpt'] = excerpt(p.stderr)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--corpus', default=os.path.join(here, 'conf-corpus.json'))
    ap.add_argument('--jobs', type=int, default=8)
    ap.add_argument('--timeout', type=int, default=60)
    a = ap.parse_args()
    with open(a.corpus) as f:
        corpus = json.load(f)
    results = [None] * len(corpus)

    def job(i):
        try:
            results[i] = run_one(corpus[i], a.timeout)
        except Exception as e:
            results[i] = {'conf': corpus[i], 'accepted': False, 'stage': 'harness', 'error': repr(e)}
        r = results[i]
        print('%3d/%d %-8s %s  %s' % (i + 1, len(corpus), 'ok' if r.get('accepted') else 'REFUSED',
                                      json.dumps(corpus[i]), r.get('error', '')), file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        list(ex.map(job, range(len(corpus))))
    with open(a.out, 'w') as f:
        json.dump(results, f, indent=1)
    print('wrote %d results to %s (%d accepted)' % (len(results), a.out,
          sum(1 for r in results if r and r.get('accepted'))), file=sys.stderr)


if __name__ == '__main__':
    main()
