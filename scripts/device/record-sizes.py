"""Records what size prediction (issue 34) and "what the memory is" (issue 35) are checked against, on a
machine with torch 2.11, transformers, torchvision and timm and a CUDA GPU. Every model is built with
random weights (nothing is downloaded); every run is one process (PYTORCH_CUDA_ALLOC_CONF is read once)
with a fixed shape, recorded from before the model is built with stacks='all' (Python and C++ frames,
_record_memory_history's default: the C++ frames tell the backward pass's allocations apart, and name a
cuDNN convolution's workspace), 3 training steps.

  python3 scripts/device/record-sizes.py all OUTDIR [PAR]      # PAR processes at a time (default 6)
  python3 scripts/device/record-sizes.py sizes OUTDIR [PAR] [CAPS]  # phases 1-2 (writes OUTDIR/caps.json; CAPS: a caps.json to use)
  python3 scripts/device/record-sizes.py rest OUTDIR CAPS [PAR] # phases 3-4 under the caps of CAPS (a caps.json)
  python3 scripts/device/record-sizes.py bisect PROGRAM LO HI CAP  # one fit search, under PYTORCH_CUDA_ALLOC_CONF
  python3 scripts/device/record-sizes.py edges OUTDIR FIT CAPS [PAR] # phase 5 from FIT (a fit.json) and CAPS
  python3 scripts/device/record-sizes.py searches OUTDIR SEARCHES [PAR] # more fit searches: [{program, cap, lo, hi}]
  python3 scripts/device/record-sizes.py repeats OUTDIR CASES N [PAR] # each case [{program, size, cap, conf}] run N times (no recording)

Phases, one after another:
  1. sizes: three programs at six sizes each, under the default config, expandable_segments:True and
     max_split_size_mb:128:
       llama-batch  transformers Llama (4 layers, d=1024) training, AdamW, bf16 autocast, seq 512, batch 1-8
       llama-seq    the same at batch 2, sequence 128-1024
       resnet       torchvision resnet50 training, SGD, bf16 autocast, 224x224, batch 8-64
       vit          timm vit_base_patch16_224 training, AdamW, bf16 autocast, batch 4-32
  2. caps: per program, a cap between the default runs' peak reserved memory at the 4th and 5th sizes
     (set_per_process_memory_fraction); every size recorded under it (default and expandable_segments),
     an out-of-memory observer dumping the snapshot at the OOM.
  3. cases: real programs the replay must reproduce event for event: a MemPool used in turn with the
     default pool on one stream and deleted midway; a CUDA graph captured under expandable_segments;
     empty_cache() under expandable_segments; a record_stream prefetch under max_split_size_mb:128; and
     max_split_size_mb together with expandable_segments. Plus a planted leak (a list of GPU tensors that
     grows every step) inside record_function step ranges.
  4. fit: the same programs under the same caps (no recording), per program and config a bisection between
     the 4th size (fits) and the 5th (does not): the largest size that fits, as `splitscope predict --fit`
     must find it, and every size tried on the way.
  5. edges: the largest size that fits and the next one, recorded under the cap (defaults and
     expandable_segments): what happens at the edge, where the last few MiB decide (a cuDNN
     convolution whose workspace does not fit runs another engine config: an OOM the program survives).

Writes NAME.pickle.gz and NAME.json (its manifest entry) per recording, fit.json (phase 4) and caps.json.
A run that ends with an OOM is recorded as the out-of-memory observer saw it at that OOM (after it the
exception frees the step's tensors); one that survives its OOMs, at its end.
"""
import gzip, json, os, pickle, random, subprocess, sys, time

GiB = 1 << 30
MiB = 1 << 20
CONFS = ['', 'expandable_segments:True', 'max_split_size_mb:128']
SIZES = {
    'llama-batch': [1, 2, 3, 4, 6, 8],
    'llama-seq': [128, 256, 384, 512, 768, 1024],
    'resnet': [8, 16, 24, 32, 48, 64],
    'vit': [4, 8, 12, 16, 24, 32],
}
STEPS = 3


def tagof(conf):
    return conf.replace(':', '=').replace(',', '+') or 'default'


def llama(torch):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                      num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
    return LlamaForCausalLM(cfg).cuda()


def train(torch, program, size):
    """STEPS training steps of `program` at `size` (a batch, or a sequence length for llama-seq)."""
    if program.startswith('llama'):
        model = llama(torch)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        batch, seq = (size, 512) if program == 'llama-batch' else (2, size)
        for _ in range(STEPS):
            x = torch.randint(0, 32000, (batch, seq), device='cuda')
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = model(input_ids=x, labels=x).loss
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            del x, loss
    elif program in ('resnet', 'vit'):
        if program == 'resnet':
            import torchvision
            model = torchvision.models.resnet50(weights=None).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        else:
            import timm
            model = timm.create_model('vit_base_patch16_224', pretrained=False).cuda()
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for _ in range(STEPS):
            x = torch.randn(size, 3, 224, 224, device='cuda'); y = torch.randint(0, 1000, (size,), device='cuda')
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            del x, y, loss
    else:
        raise ValueError(program)


# ---- phase 4: the cases the replay must reproduce, and issue 35's leak and annotated run ----

def case_mempool_turns(torch):
    """A MemPool used in turn with the default pool on one stream, then deleted midway."""
    pool = torch.cuda.MemPool()
    keep = []
    for i in range(6):
        with torch.cuda.use_mem_pool(pool):
            keep.append(torch.empty((3 + i) * MiB, dtype=torch.uint8, device='cuda'))
        d = torch.empty((5 + 2 * i) * MiB, dtype=torch.uint8, device='cuda')
        keep.append(d)
        if i % 2:
            del keep[-3]
    del keep[::2]
    del pool
    more = [torch.empty((7 + i) * MiB, dtype=torch.uint8, device='cuda') for i in range(6)]
    del more[1::2]
    torch.cuda.empty_cache()
    return keep, more


def case_graph_expandable(torch):
    """A CUDA graph captured under expandable_segments:True (its private pool beside the default pool's expandable segments)."""
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    x = torch.randn(256, 1024, device='cuda')
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        with torch.cuda.stream(side):
            for _ in range(3):
                y = model(x)
        torch.cuda.current_stream().wait_stream(side)
        del y
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(x)
        for i in range(4):
            x.copy_(torch.randn_like(x))
            g.replay()
            junk = [torch.empty((3 + 5 * j) * MiB, dtype=torch.uint8, device='cuda') for j in range(4)]
            del junk
    del g, out
    torch.cuda.empty_cache()


def case_empty_cache_expandable(torch):
    """empty_cache() between phases under expandable_segments:True: which pages are unmapped, and when."""
    for phase in range(3):
        xs = [torch.empty((1 + (7 * i + phase) % 23) * MiB, dtype=torch.uint8, device='cuda') for i in range(40)]
        del xs[::3]
        ys = [torch.empty((30 + 11 * i) * MiB, dtype=torch.uint8, device='cuda') for i in range(4)]
        del ys[1]
        del xs
        torch.cuda.empty_cache()
        del ys


def case_prefetch(torch):
    """A side-stream prefetch with record_stream under max_split_size_mb:128, its last completions near the end."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
                                torch.nn.Flatten(), torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    side = torch.cuda.Stream()
    host = [torch.randn(64, 3, 96 + 16 * (i % 3), 96).pin_memory() for i in range(4)]

    def load(i):
        with torch.cuda.stream(side):
            x = host[i % len(host)].to('cuda', non_blocking=True)
        x.record_stream(torch.cuda.current_stream())
        return x
    nxt = load(0)
    for i in range(20):
        torch.cuda.current_stream().wait_stream(side)
        x = nxt; nxt = load(i + 1)
        loss = model(x).float().square().mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, loss
    del nxt


def case_mixed(torch):
    """max_split_size_mb with expandable_segments (pytorch/pytorch#123548): many sizes, some large, freed and made again."""
    rng = random.Random(5)
    live = []
    for i in range(300):
        size = rng.choice([1, 2, 5, 12, 40, 90, 130, 260]) * MiB + rng.randrange(0, MiB, 512)
        live.append(torch.empty(size, dtype=torch.uint8, device='cuda'))
        if len(live) > 12:
            del live[rng.randrange(len(live))]


def case_leak(torch):
    """Training with a planted leak: every step appends a GPU tensor (the loss history) to a list."""
    model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for step in range(12):
        with torch.autograd.profiler.record_function(f'ProfilerStep#{step}'):
            x = torch.randn(512, 2048, device='cuda')
            out = model(x)
            loss = out.square().mean()
            history.append(out.detach().clone())  # the leak: 4 MiB a step, kept
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            del x, out, loss
    return history


CASES = {
    'mempool_turns': ('', case_mempool_turns),
    'graph_expandable': ('expandable_segments:True', case_graph_expandable),
    'empty_cache_expandable': ('expandable_segments:True', case_empty_cache_expandable),
    'prefetch_max_split': ('max_split_size_mb:128', case_prefetch),
    'max_split_expandable': ('max_split_size_mb:128,expandable_segments:True', case_mixed),
    'leak': ('', case_leak),
}


def record(name, outdir, run, cap=None, meta=None):
    """Runs `run(torch)` recorded from the start; writes the snapshot (at the OOM when one comes) and its manifest entry."""
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    total = torch.cuda.get_device_properties(0).total_memory
    if cap:
        torch.cuda.set_per_process_memory_fraction(cap / total)
    torch.cuda.memory._record_memory_history(max_entries=10_000_000, stacks='all')
    state = {'snap': None, 'stats': None}

    def observer(device, alloc, device_alloc, device_free):
        # Every OOM: the last one is where a run that ends with an OOM stopped.
        state['snap'] = torch.cuda.memory._snapshot(); state['stats'] = torch.cuda.memory_stats()
    torch._C._cuda_attach_out_of_memory_observer(observer)
    t0 = time.time(); err = None
    try:
        kept = run(torch)
    except torch.cuda.OutOfMemoryError as e:
        err = str(e).splitlines()[0][:300]
    torch.cuda.synchronize()
    snap = state['snap'] if err else torch.cuda.memory._snapshot()
    stats = state['stats'] if err else torch.cuda.memory_stats()
    with open(os.path.join(outdir, name + '.pickle.gz'), 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=9, mtime=0) as f:
        pickle.dump(snap, f)
    trace = snap['device_traces'][0]
    rec = dict(meta or {}, file=name + '.pickle.gz', conf=os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''), torch=torch.__version__,
               device_total=total, trace_events=len(trace), ooms=sum(1 for e in trace if e['action'] == 'oom'), oom_error=err,
               seconds=round(time.time() - t0, 1), stats_at_end=dict(stats), allocator_settings=snap.get('allocator_settings'))
    first_oom = next((i for i, e in enumerate(trace) if e['action'] == 'oom'), None)
    if first_oom is not None:
        # Where the first OOM came: its trace index and the allocations asked before it.
        rec['first_oom'] = {'event': first_oom, 'size': trace[first_oom]['size'],
                            'allocs_before': sum(1 for e in trace[:first_oom] if e['action'] == 'alloc')}
    if cap:
        rec['allowed_memory_maximum'] = int((cap / total) * float(total))
    with open(os.path.join(outdir, name + '.json'), 'w') as f:
        json.dump(rec, f)
    print(f"{name}: {rec['trace_events']} events, {rec['ooms']} ooms, reserved_peak={stats.get('reserved_bytes.all.peak', 0) >> 20} MiB, {rec['seconds']} s"
          + (f", OOM: {err[:60]}" if err else ''), flush=True)


def fits(program, size, cap):
    """Whether the program at `size` runs its steps under `cap` without an OOM (no recording)."""
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    torch.cuda.set_per_process_memory_fraction(cap / torch.cuda.get_device_properties(0).total_memory)
    try:
        train(torch, program, size)
        ok = True
    except torch.cuda.OutOfMemoryError:
        ok = False
    print(json.dumps({'program': program, 'size': size, 'cap': cap, 'conf': os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''), 'fits': ok,
                      'reserved_peak': torch.cuda.memory_stats().get('reserved_bytes.all.peak', 0)}), flush=True)


def spawn(args, conf, script=__file__):
    env = dict(os.environ, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1', PYTHONUNBUFFERED='1')
    if conf:
        env['PYTORCH_CUDA_ALLOC_CONF'] = conf
    else:
        env.pop('PYTORCH_CUDA_ALLOC_CONF', None)
    return subprocess.Popen([sys.executable, script, *args], env=env, stdout=subprocess.PIPE, text=True)


def run_all(jobs, par, script=__file__):
    """Runs [(args, conf)] `par` at a time, each `script ARGS` in a process of its own; returns each job's stdout."""
    out = [None] * len(jobs)
    running = []
    pending = list(enumerate(jobs))
    while pending or running:
        while pending and len(running) < par:
            i, (args, conf) = pending.pop(0)
            running.append((i, spawn(args, conf, script), time.time(), args))
        for r in list(running):
            i, p, t, args = r
            if p.poll() is not None:
                running.remove(r)
                out[i] = p.stdout.read()
                sys.stdout.write(out[i])
                if p.returncode:
                    print(f'job failed: {args} exit {p.returncode}', flush=True)
            elif time.time() - t > 240:
                p.kill(); print(f'job killed after 240 s: {args}', flush=True)
        time.sleep(0.2)
    return out


def name_of(program, size, conf, cap=None):
    return f"{program}-{size}__{tagof(conf)}" + (f"__cap{cap / GiB:.2f}GiB" if cap else '')


def phase_sizes(outdir, par, caps=None):
    """Phases 1 and 2: every size uncapped under three configs, then under a cap per program (`caps`,
    else between the default runs' peak reserved at the 4th and 5th sizes)."""
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    run_all([(['size', p, str(s), outdir], c) for p in SIZES for s in SIZES[p] for c in CONFS], par)
    print(f'--- sizes done in {time.time() - t0:.0f} s', flush=True)
    given = caps is not None
    caps = dict(caps or {})
    for p, sizes in ({} if given else SIZES).items():
        try:
            peak = lambda s: json.load(open(os.path.join(outdir, name_of(p, s, '') + '.json')))['stats_at_end']['reserved_bytes.all.peak']
            caps[p] = int((peak(sizes[3]) + peak(sizes[4])) / 2) // MiB * MiB
        except (OSError, KeyError, ValueError) as e:
            print(f'no cap for {p}: {e}', flush=True)
    json.dump(caps, open(os.path.join(outdir, 'caps.json'), 'w'))
    run_all([(['size', p, str(s), outdir, str(caps[p])], c) for p in caps for s in SIZES[p] for c in CONFS[:2]], par)
    print(f'--- caps done in {time.time() - t0:.0f} s: {caps}', flush=True)
    return caps


def probe(program, size, cap, conf):
    """One `fits` run in a process of its own: its JSON line, or None when it failed otherwise."""
    p = spawn(['fits', program, str(size), str(cap)], conf)
    out, _ = p.communicate(timeout=240)
    line = next((l for l in out.splitlines() if l.startswith('{')), None)
    print(line or f'fits failed: {program} {size} {conf!r} exit {p.returncode}', flush=True)
    return json.loads(line) if line else None


def bisect_fit(program, cap, conf, lo=None, hi=None):
    """The largest size that fits under `cap`, between `lo` (fits; the 4th size) and `hi` (does not; the 5th); every probe."""
    lo, hi = lo or SIZES[program][3], hi or SIZES[program][4]
    probes = [probe(program, lo, cap, conf), probe(program, hi, cap, conf)]
    if not (probes[0] and probes[0]['fits']) or (probes[1] and probes[1]['fits']):
        return probes  # not bracketed: the probes say why
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = probe(program, mid, cap, conf)
        probes.append(r)
        if r is None:
            break
        lo, hi = (mid, hi) if r['fits'] else (lo, mid)
    return probes


def phase_rest(outdir, par, caps):
    """Phases 3 and 4: the conformance cases, then the largest size that fits each cap, per config."""
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    run_all([(['case', name, outdir], conf) for name, (conf, _) in CASES.items()], par)
    print(f'--- cases done in {time.time() - t0:.0f} s', flush=True)
    with ThreadPoolExecutor(par) as pool:
        searches = [pool.submit(bisect_fit, p, caps[p], c) for p in caps for c in CONFS[:2]]
        fit = [r for f in searches for r in f.result() if r]
    json.dump(fit, open(os.path.join(outdir, 'fit.json'), 'w'), indent=0)
    print(f'--- fit done in {time.time() - t0:.0f} s', flush=True)
    phase_edges(outdir, par, fit, caps)


def more_searches(outdir, par, searches):
    """Fit searches under other caps (each between lo, which fits, and hi), per config: more-fit.json."""
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(outdir, exist_ok=True)
    with ThreadPoolExecutor(par) as pool:
        found = [pool.submit(bisect_fit, q['program'], q['cap'], c, q['lo'], q['hi']) for q in searches for c in CONFS[:2]]
        fit = [r for f in found for r in f.result() if r]
    json.dump(fit, open(os.path.join(outdir, 'more-fit.json'), 'w'), indent=0)


def repeats(outdir, par, cases, n):
    """Each case run `n` times in processes of their own, without recording: whether a size fits a cap is
    the same run to run, or where the driver puts the segments (it differs from process to process)
    decides it. Writes repeats.json: per case, each run's fits."""
    os.makedirs(outdir, exist_ok=True)
    jobs = [(['fits', c['program'], str(c['size']), str(c['cap'])], c.get('conf', '')) for c in cases for _ in range(n)]
    outs = run_all(jobs, par)
    rows = []
    for k, c in enumerate(cases):
        runs = []
        for out in outs[k * n:(k + 1) * n]:
            line = next((l for l in (out or '').splitlines() if l.startswith('{')), None)
            runs.append(json.loads(line)['fits'] if line else None)
        rows.append(dict(c, fits=runs))
        print(json.dumps(rows[-1]), flush=True)
    json.dump(rows, open(os.path.join(outdir, 'repeats.json'), 'w'), indent=0)


def phase_edges(outdir, par, fit, caps):
    """Phase 5: per program and config, the largest size that fit the cap and the next one (which did
    not), recorded under it."""
    jobs = []
    for p in caps:
        for c in CONFS[:2]:
            probes = [r for r in fit if r['program'] == p and r['conf'] == c]
            largest = max((r['size'] for r in probes if r['fits']), default=None)
            if largest is not None and any(r['size'] == largest + 1 and not r['fits'] for r in probes):
                jobs += [(['size', p, str(s), outdir, str(caps[p])], c) for s in (largest, largest + 1)]
    run_all(jobs, par)


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'all':
        par = int(sys.argv[3]) if len(sys.argv) > 3 else 6
        phase_rest(sys.argv[2], par, phase_sizes(sys.argv[2], par))
    elif cmd == 'sizes':
        caps = {k: int(v) for k, v in json.load(open(sys.argv[4])).items()} if len(sys.argv) > 4 else None
        phase_sizes(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 6, caps)
    elif cmd == 'searches':
        more_searches(sys.argv[2], int(sys.argv[4]) if len(sys.argv) > 4 else 6, json.load(open(sys.argv[3])))
    elif cmd == 'repeats':
        repeats(sys.argv[2], int(sys.argv[5]) if len(sys.argv) > 5 else 6, json.load(open(sys.argv[3])), int(sys.argv[4]))
    elif cmd == 'edges':
        caps = {k: int(v) for k, v in json.load(open(sys.argv[4])).items()}
        phase_edges(sys.argv[2], int(sys.argv[5]) if len(sys.argv) > 5 else 6, json.load(open(sys.argv[3])), caps)
    elif cmd == 'rest':
        phase_rest(sys.argv[2], int(sys.argv[4]) if len(sys.argv) > 4 else 6, {k: int(v) for k, v in json.load(open(sys.argv[3])).items()})
    elif cmd == 'size':
        program, size, outdir = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        cap = int(sys.argv[5]) if len(sys.argv) > 5 else None
        conf = os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')
        kind = 'sequence' if program == 'llama-seq' else 'batch'
        record(name_of(program, size, conf, cap), outdir, lambda torch: train(torch, program, size), cap,
               {'program': program, 'size_kind': kind, 'size': size, 'steps': STEPS})
    elif cmd == 'bisect':  # bisect PROGRAM LO HI CAP: one search under PYTORCH_CUDA_ALLOC_CONF, its probes as JSON lines
        bisect_fit(sys.argv[2], int(sys.argv[5]), os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''), int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == 'fits':
        fits(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == 'case':
        name, outdir = sys.argv[2], sys.argv[3]
        record(name, outdir, CASES[name][1], None, {'case': name, 'description': CASES[name][1].__doc__})
