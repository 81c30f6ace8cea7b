"""Records the held-out programs issue 45 is judged on: real frameworks' training loops, recorded the way
users record them, on a machine with torch 2.11, transformers, lightning, peft, torchvision and a CUDA GPU.
Random weights, nothing downloaded, one process per run (PYTORCH_CUDA_ALLOC_CONF is read once).

  python3 scripts/device/record-frameworks.py all OUTDIR [PAR]         # phase 1: every program, size and mode
  python3 scripts/device/record-frameworks.py caps OUTDIR [PAR] [REPS] # phase 2: from phase 1's peaks, under a cap
  python3 scripts/device/record-frameworks.py cases OUTDIR [PAR]       # phase 3: the replay's remaining misses
  python3 scripts/device/record-frameworks.py case NAME OUTDIR MODE  # one of phase 3's, under its config
  python3 scripts/device/record-frameworks.py one PROGRAM SIZE MODE OUTDIR [CAP]
  python3 scripts/device/record-frameworks.py fits PROGRAM SIZE CAP    # no recording: whether it runs under CAP

Programs (3 optimizer steps each, recorded from before the model is built):
  trainer    transformers.Trainer fine-tuning GPT-2 (4 layers, d=512, vocab 8192, seq 256), AdamW, bf16; by batch
  lightning  a Lightning module (a 4-layer transformer encoder, d=512, seq 128), accumulate_grad_batches=2,
             bf16-mixed, AdamW; by batch. Lightning runs forward and backward inside optimizer.step(closure)
  peft       PEFT LoRA (r=8, q/v projections) on a Llama (4 layers, d=512, seq 256), bf16 autocast, AdamW; by batch
  compiled   torch.compile'd training loop of the same encoder as lightning, AdamW; by batch
  convnet    torchvision resnet18, SGD with momentum, fp16 autocast with GradScaler, 224^2; by batch
  segnet     torchvision deeplabv3_mobilenet_v3_large (21 classes), Adam, batch 4; by image side
  sgd        a plain loop: an MLP (1024-4096-4096-1024), SGD with momentum, fp32; by batch
  microbatch the out-of-memory program's Llama (8 layers, d=1024), AdamW, bf16 autocast, 8 x 512 tokens a
             step; SIZE: the micro-batches it is split into, gradients accumulated (not in the phases)

Modes: `python` records with _record_memory_history(stacks='python'); `default` with the recorder's
defaults, _record_memory_history() (stacks='all': Python and C++ frames, max_entries unbounded).

Truth: after every optimizer step (a global step post-hook, so inside Trainer's, Lightning's and
GradScaler's own calls), what the program knew: its parameters' bytes, the trainable ones', the bytes of
the gradients present, the optimizer state's bytes (wherever each tensor is), memory_allocated() and the
step's max_memory_allocated(); each such moment is marked in the trace by an allocation of MARKER + 512 x
step bytes, freed at once.

Phase 2: per program a cap halfway between the python-mode peaks reserved at the 4th and 5th sizes; all six
sizes recorded under it (both modes; an out-of-memory observer dumps the snapshot at the OOM), and every
size from the 4th to the 5th run REPS times without recording: the largest size that fits, run to run.

Phase 3: MemPools used in turn (two, one deleted midway; one under expandable_segments), empty_cache()
under expandable_segments with blocks still held, a record_stream prefetch under max_split_size_mb:128;
both modes.

Writes NAME.pickle.gz and NAME.json (its manifest entry) per recording, caps.json and fits.json.
"""
import gzip, json, os, pickle, subprocess, sys, tempfile, time

MiB = 1 << 20
MARKER = 7_340_033
STEPS = 3
SIZES = {  # the slowest to start first
    'compiled': [4, 8, 12, 16, 24, 32],
    'trainer': [2, 4, 6, 8, 12, 16],
    'lightning': [4, 8, 12, 16, 24, 32],
    'peft': [1, 2, 3, 4, 6, 8],
    'convnet': [8, 16, 24, 32, 48, 64],
    'segnet': [128, 192, 256, 320, 384, 448],
    'sgd': [256, 512, 768, 1024, 1536, 2048],
}
SIZE_KIND = {'segnet': 'image side'}
MODES = ['python', 'default']
STATE = {'model': None, 'step': 0, 'truth': []}


def nbytes(t):
    return t.numel() * t.element_size()


def on_step(opt, args, kwargs):
    """The global optimizer step post-hook: what the program knows now, marked in the trace."""
    import torch
    model = STATE['model']
    if model is None:
        return
    torch.cuda.synchronize()
    params = list(model.parameters())
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    k = STATE['step']
    STATE['truth'].append({
        'step': k,
        'marker': MARKER + 512 * k,
        'parameter': sum(nbytes(p) for p in params),
        'trainable': sum(nbytes(p) for p in params if p.requires_grad),
        'buffer': sum(nbytes(b) for b in model.buffers()),
        'gradient': sum(nbytes(p.grad) for p in params if p.grad is not None),
        'optimizer_state': sum(nbytes(v) for v in state),
        'optimizer_state_on_gpu': sum(nbytes(v) for v in state if v.is_cuda),
        'allocated': torch.cuda.memory_allocated(),
        'max_allocated': torch.cuda.max_memory_allocated(),
    })
    m = torch.empty(MARKER + 512 * k, dtype=torch.uint8, device='cuda')
    del m
    torch.cuda.reset_peak_memory_stats()
    STATE['step'] = k + 1


# ---- the programs ----

def gpt2(torch):
    from transformers import GPT2Config, GPT2LMHeadModel
    return GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=8192, n_positions=256))


def small_llama(torch):
    from transformers import LlamaConfig, LlamaForCausalLM
    return LlamaForCausalLM(LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                                        num_key_value_heads=4, vocab_size=8192, max_position_embeddings=512))


def encoder(torch):
    nn = torch.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(8192, 512)
            layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
            self.body = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
            self.head = nn.Linear(512, 8192)

        def forward(self, x):
            return self.head(self.body(self.embed(x)))
    return Encoder()


def run_trainer(torch, size):
    from transformers import Trainer, TrainingArguments

    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 64 * size

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            x = torch.randint(0, 8192, (256,), generator=g)
            return {'input_ids': x, 'labels': x}
    model = gpt2(torch)
    STATE['model'] = model
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=size, max_steps=STEPS, bf16=True, report_to=[],
                                 save_strategy='no', logging_strategy='no', dataloader_num_workers=0, optim='adamw_torch',
                                 disable_tqdm=True)
        Trainer(model=model, args=args, train_dataset=Tokens()).train()


def run_lightning(torch, size):
    import lightning as L
    make = encoder

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = make(torch)

        def training_step(self, batch, i):
            x = batch[0]
            return torch.nn.functional.cross_entropy(self.net(x).flatten(0, 1), x.flatten())

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)
    data = torch.utils.data.TensorDataset(torch.randint(0, 8192, (2 * STEPS * size, 128)))
    module = Module()
    STATE['model'] = module
    trainer = L.Trainer(accelerator='gpu', devices=1, max_steps=STEPS, accumulate_grad_batches=2, precision='bf16-mixed',
                        enable_checkpointing=False, logger=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(module, torch.utils.data.DataLoader(data, batch_size=size))


def run_peft(torch, size):
    from peft import LoraConfig, get_peft_model
    model = get_peft_model(small_llama(torch), LoraConfig(r=8, lora_alpha=16, target_modules=['q_proj', 'v_proj'])).cuda()
    STATE['model'] = model
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    for _ in range(STEPS):
        x = torch.randint(0, 8192, (size, 256), device='cuda')
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, loss


def run_compiled(torch, size):
    model = encoder(torch).cuda()
    STATE['model'] = model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fwd = torch.compile(model)
    for _ in range(STEPS):
        x = torch.randint(0, 8192, (size, 128), device='cuda')
        loss = torch.nn.functional.cross_entropy(fwd(x).flatten(0, 1), x.flatten())
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, loss


def run_convnet(torch, size):
    import torchvision
    model = torchvision.models.resnet18(weights=None).cuda()
    STATE['model'] = model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler('cuda', init_scale=1024.0)
    for _ in range(STEPS):
        x = torch.randn(size, 3, 224, 224, device='cuda'); y = torch.randint(0, 1000, (size,), device='cuda')
        with torch.autocast('cuda', dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update(); opt.zero_grad(set_to_none=True)
        del x, y, loss


def run_segnet(torch, size):
    import torchvision
    model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21).cuda()
    STATE['model'] = model
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for _ in range(STEPS):
        x = torch.randn(4, 3, size, size, device='cuda'); y = torch.randint(0, 21, (4, size, size), device='cuda')
        loss = torch.nn.functional.cross_entropy(model(x)['out'], y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, y, loss


def run_sgd(torch, size):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()
    STATE['model'] = model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(STEPS):
        x = torch.randn(size, 1024, device='cuda')
        loss = (model(x) - x).square().mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, loss


def run_microbatch(torch, size):
    """The out-of-memory program's Llama (8 layers, d=1024; ../shared/tools/record-real-workloads.py's `oom`),
    AdamW, bf16 autocast, a batch of 8 x 512 tokens a step split into `size` micro-batches whose gradients
    accumulate to the step (size 1: none)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    model = LlamaForCausalLM(LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                                         num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)).cuda()
    STATE['model'] = model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(STEPS):
        for _ in range(size):
            x = torch.randint(0, 32000, (8 // size, 512), device='cuda')
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = model(input_ids=x, labels=x).loss / size
            loss.backward()
            del x, loss
        opt.step(); opt.zero_grad(set_to_none=True)


# ---- phase 3: programs the replay must reproduce event for event ----

def case_two_mempools(torch):
    """Two MemPools used in turn with the default pool, one deleted midway."""
    a, b = torch.cuda.MemPool(), torch.cuda.MemPool()
    keep = []
    for i in range(8):
        with torch.cuda.use_mem_pool(a if i % 2 else b):
            keep.append(torch.empty((2 + 3 * i) * MiB, dtype=torch.uint8, device='cuda'))
        keep.append(torch.empty((5 + i) * MiB, dtype=torch.uint8, device='cuda'))
        if i == 4:
            del keep[0::4]
            del b
            b = torch.cuda.MemPool()
    del keep[1::3]
    more = [torch.empty((9 + i) * MiB, dtype=torch.uint8, device='cuda') for i in range(5)]
    del more[::2]
    return keep, more, a, b


def case_mempool_expandable(torch):
    """A MemPool under expandable_segments:True beside the default pool's expandable segments."""
    pool = torch.cuda.MemPool()
    keep = []
    for i in range(6):
        keep.append(torch.empty((3 + 7 * i) * MiB, dtype=torch.uint8, device='cuda'))
        with torch.cuda.use_mem_pool(pool):
            keep.append(torch.empty((4 + 5 * i) * MiB, dtype=torch.uint8, device='cuda'))
        if i % 2:
            del keep[-4]
    del keep[::3]
    torch.cuda.empty_cache()
    return keep, pool


def case_empty_cache_expandable(torch):
    """empty_cache() between phases under expandable_segments:True, blocks of each phase still held."""
    held = []
    for phase in range(4):
        xs = [torch.empty((1 + (5 * i + phase) % 19) * MiB, dtype=torch.uint8, device='cuda') for i in range(30)]
        ys = [torch.empty((24 + 13 * i) * MiB, dtype=torch.uint8, device='cuda') for i in range(3)]
        held.append(xs[phase]); del xs[::2]; del ys[1]
        torch.cuda.empty_cache()
        del xs, ys
    torch.cuda.empty_cache()
    return held


def case_prefetch(torch):
    """A record_stream'd side-stream prefetch under max_split_size_mb:128, big batches, its last completions at the end."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
                                torch.nn.Flatten(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    side = torch.cuda.Stream()
    host = [torch.randn(96, 3, 160 + 32 * (i % 3), 160).pin_memory() for i in range(3)]

    def load(i):
        with torch.cuda.stream(side):
            x = host[i % len(host)].to('cuda', non_blocking=True)
        x.record_stream(torch.cuda.current_stream())
        return x
    nxt = load(0)
    for i in range(12):
        torch.cuda.current_stream().wait_stream(side)
        x = nxt; nxt = load(i + 1)
        loss = model(x).float().square().mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, loss
    del nxt


CASES = {
    'two_mempools': ('', case_two_mempools),
    'mempool_expandable': ('expandable_segments:True', case_mempool_expandable),
    'empty_cache_expandable2': ('expandable_segments:True', case_empty_cache_expandable),
    'prefetch_max_split2': ('max_split_size_mb:128', case_prefetch),
}


def record_case(name, outdir, mode):
    import torch
    start(torch, None)
    torch.cuda.memory._record_memory_history(stacks='python') if mode == 'python' else torch.cuda.memory._record_memory_history()
    kept = CASES[name][1](torch)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    del kept
    file = f'{name}__{mode}.pickle.gz'
    with open(os.path.join(outdir, file), 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=9, mtime=0) as f:
        pickle.dump(snap, f)
    json.dump({'file': file, 'case': name, 'mode': mode, 'conf': os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''),
               'description': CASES[name][1].__doc__, 'torch': torch.__version__, 'device': torch.cuda.get_device_name(0),
               'trace_events': len(snap['device_traces'][0])}, open(os.path.join(outdir, f'{name}__{mode}.json'), 'w'))
    print(f'{name}__{mode}: {len(snap["device_traces"][0])} events', flush=True)


PROGRAMS = {'trainer': run_trainer, 'lightning': run_lightning, 'peft': run_peft, 'compiled': run_compiled,
            'convnet': run_convnet, 'segnet': run_segnet, 'sgd': run_sgd, 'microbatch': run_microbatch}


# ---- recording ----

def start(torch, cap):
    torch.cuda.init()
    torch.manual_seed(0)
    total = torch.cuda.get_device_properties(0).total_memory
    if cap:
        torch.cuda.set_per_process_memory_fraction(cap / total)
    from torch.optim.optimizer import register_optimizer_step_post_hook
    register_optimizer_step_post_hook(on_step)
    return total


def record(program, size, mode, outdir, cap=None):
    import torch
    total = start(torch, cap)
    if mode == 'python':
        torch.cuda.memory._record_memory_history(stacks='python')
    else:
        torch.cuda.memory._record_memory_history()  # the recorder's defaults
    state = {'snap': None}

    def observer(device, alloc, device_alloc, device_free):
        state['snap'] = torch.cuda.memory._snapshot()
    torch._C._cuda_attach_out_of_memory_observer(observer)
    t0 = time.time(); err = None
    try:
        PROGRAMS[program](torch, size)
    except torch.cuda.OutOfMemoryError as e:
        err = str(e).splitlines()[0][:300]
    torch.cuda.synchronize()
    snap = state['snap'] if err else torch.cuda.memory._snapshot()
    stats = torch.cuda.memory_stats()
    name = f'{program}-{size}__{mode}' + (f'__cap{cap // MiB}MiB' if cap else '')
    with open(os.path.join(outdir, name + '.pickle.gz'), 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=9, mtime=0) as f:
        pickle.dump(snap, f)
    trace = snap['device_traces'][0]
    rec = {'file': name + '.pickle.gz', 'program': program, 'size_kind': SIZE_KIND.get(program, 'batch'), 'size': size,
           'mode': mode, 'steps': STEPS, 'conf': os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''), 'torch': torch.__version__,
           'device': torch.cuda.get_device_name(0), 'device_total': total, 'cap': cap, 'trace_events': len(trace),
           'ooms': sum(1 for e in trace if e['action'] == 'oom'), 'oom_error': err, 'seconds': round(time.time() - t0, 1),
           'peak_reserved': stats.get('reserved_bytes.all.peak', 0), 'peak_allocated': stats.get('allocated_bytes.all.peak', 0),
           'cuda_malloc_count': stats.get('segment.all.allocated', 0), 'truth': STATE['truth']}
    first_oom = next((i for i, e in enumerate(trace) if e['action'] == 'oom'), None)
    if first_oom is not None:
        rec['first_oom'] = {'event': first_oom, 'size': trace[first_oom]['size'],
                            'allocs_before': sum(1 for e in trace[:first_oom] if e['action'] == 'alloc')}
    with open(os.path.join(outdir, name + '.json'), 'w') as f:
        json.dump(rec, f)
    print(f"{name}: {len(trace)} events, peak reserved {rec['peak_reserved'] >> 20} MiB, {rec['seconds']} s"
          + (f', OOM: {err[:60]}' if err else ''), flush=True)


def fits(program, size, cap):
    import torch
    start(torch, cap)
    try:
        PROGRAMS[program](torch, size)
        ok = True
    except torch.cuda.OutOfMemoryError:
        ok = False
    print(json.dumps({'program': program, 'size': size, 'cap': cap, 'fits': ok,
                      'peak_reserved': torch.cuda.memory_stats().get('reserved_bytes.all.peak', 0)}), flush=True)


def run_all(jobs, par, limit=300):
    """Runs each job's arguments (and PYTORCH_CUDA_ALLOC_CONF, for a case) in a process of its own, `par` at a
    time; returns each one's stdout."""
    out, running, pending = [None] * len(jobs), [], list(enumerate(jobs))
    while pending or running:
        while pending and len(running) < par:
            i, args = pending.pop(0)
            env = dict(os.environ, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1', PYTHONUNBUFFERED='1', TOKENIZERS_PARALLELISM='false')
            env.pop('PYTORCH_CUDA_ALLOC_CONF', None)
            if args[0] == 'case' and CASES[args[1]][0]:
                env['PYTORCH_CUDA_ALLOC_CONF'] = CASES[args[1]][0]
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), *map(str, args)], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            running.append((i, p, time.time(), args))
        for r in list(running):
            i, p, t, args = r
            if p.poll() is not None:
                running.remove(r)
                out[i] = p.stdout.read()
                lines = out[i].splitlines()
                if p.returncode:
                    print(f'job failed: {args} exit {p.returncode}\n' + '\n'.join(lines[-15:]), flush=True)
                else:
                    print('\n'.join(l for l in lines if l.startswith('{') or '__' in l.split(':')[0]), flush=True)
            elif time.time() - t > limit:
                p.kill(); print(f'job killed after {limit} s: {args}', flush=True)
        time.sleep(0.2)
    return out


def phase_all(outdir, par):
    os.makedirs(outdir, exist_ok=True)
    run_all([['one', p, s, m, outdir] for p in SIZES for s in SIZES[p] for m in MODES], par)


def phase_caps(outdir, par, reps):
    caps = {}
    for p, sizes in SIZES.items():
        try:
            peak = lambda s: json.load(open(os.path.join(outdir, f'{p}-{s}__python.json')))['peak_reserved']
            caps[p] = (peak(sizes[3]) + peak(sizes[4])) // 2 // MiB * MiB
        except (OSError, KeyError, ValueError) as e:
            print(f'no cap for {p}: {e}', flush=True)
    json.dump(caps, open(os.path.join(outdir, 'caps.json'), 'w'))
    jobs = [['one', p, s, m, outdir, caps[p]] for p in caps for s in SIZES[p] for m in MODES]
    # Every size from the 4th to the 5th, in at most five steps (an image side or a large batch in coarser ones).
    edge = [(p, s) for p in caps for s in range(SIZES[p][3], SIZES[p][4] + 1, max(1, (SIZES[p][4] - SIZES[p][3]) // 4))]
    jobs += [['fits', p, s, caps[p]] for p, s in edge for _ in range(reps)]
    outs = run_all(jobs, par)
    rows = [json.loads(l) for o in outs for l in (o or '').splitlines() if l.startswith('{"program"')]
    json.dump(rows, open(os.path.join(outdir, 'fits.json'), 'w'), indent=0)


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'all':
        phase_all(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 8)
    elif cmd == 'caps':
        phase_caps(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 8, int(sys.argv[4]) if len(sys.argv) > 4 else 3)
    elif cmd == 'one':
        record(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]) if len(sys.argv) > 6 else None)
    elif cmd == 'cases':
        os.makedirs(sys.argv[2], exist_ok=True)
        run_all([['case', c, sys.argv[2], m] for c in CASES for m in MODES], int(sys.argv[3]) if len(sys.argv) > 3 else 8)
    elif cmd == 'case':
        record_case(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'fits':
        fits(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(f'unknown command {cmd!r}')
