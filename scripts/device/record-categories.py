"""Records what "what the memory is" (issue 35) is checked against, on a machine with torch 2.11,
transformers, torchvision and timm and a CUDA GPU: real training programs that also write what they
know of their memory, read from the model and the optimizer after each optimizer step (before
zero_grad): parameter bytes, gradient bytes, optimizer state bytes (CUDA tensors of
optimizer.state), the bytes the program itself keeps (a list, a cache), and the step's
torch.cuda.max_memory_allocated(); once, one micro-batch's input bytes, and after the last step the
bytes of cuBLAS's workspaces (what clearing them frees). Each such moment is marked in
the trace by a marker allocation of a size no program makes (MARKER + the step), freed at once, so a
test finds the request it stands for. Random weights, nothing downloaded, one process per run.

  python3 scripts/device/record-categories.py all OUTDIR [PAR]

Runs (4 optimizer steps each, stacks='python', recorded from before the model is built):
  llama     transformers Llama (4 layers, d=1024), AdamW, bf16 autocast, batch 4 x 512
  resnet    torchvision resnet50, SGD with momentum, bf16 autocast, batch 32 x 224^2
  vit       timm vit_base_patch16_224, AdamW, bf16 autocast, batch 16
each plain, with gradient checkpointing (-ckpt) and with 2-step gradient accumulation (-accum);
and three for leaks, 10 steps each of a small MLP with Adam: leak (a list keeps one output per
step), noleak (the same without), warmup (a cache that fills over the first 3 steps, then stays).

Writes NAME.pickle.gz and NAME.json (its manifest entry, with "truth": one record per optimizer step).
"""
import importlib.util, json, os, sys

_spec = importlib.util.spec_from_file_location('record_sizes', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'record-sizes.py'))
_sizes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sizes)
record, run_all, llama = _sizes.record, _sizes.run_all, _sizes.llama

MARKER = 7_340_033  # bytes: an odd size no program asks for; the marker of step k is MARKER + 512 * k
STEPS = 4
PROGRAMS = ['llama', 'resnet', 'vit']
VARIANTS = ['', '-ckpt', '-accum']


def truth(torch, model, opt, step, meta, held=()):
    """What the program knows after optimizer step `step`, marked in the trace; `held`: tensors the
    program itself keeps (a leak's list, a cache)."""
    torch.cuda.synchronize()
    nbytes = lambda t: t.numel() * t.element_size()
    params = [p for p in model.parameters()]
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v) and v.is_cuda]
    meta.setdefault('truth', []).append({
        'step': step,
        'marker': MARKER + 512 * step,
        'parameter': sum(nbytes(p) for p in params),
        'buffer': sum(nbytes(b) for b in model.buffers() if b.is_cuda),
        'gradient': sum(nbytes(p.grad) for p in params if p.grad is not None),
        'optimizer_state': sum(nbytes(v) for v in state),
        'held': sum(nbytes(t) for t in held),
        'allocated': torch.cuda.memory_allocated(),
        'max_allocated': torch.cuda.max_memory_allocated(),
    })
    m = torch.empty(MARKER + 512 * step, dtype=torch.uint8, device='cuda')
    del m
    torch.cuda.reset_peak_memory_stats()


def workspaces(torch, meta):
    """After the last step: the bytes of cuBLAS's workspaces (one per handle: the main thread's and the
    autograd thread's), what memory_allocated() drops by when they are cleared."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    try:
        torch._C._cuda_clearCublasWorkspaces()
        meta['workspace'] = before - torch.cuda.memory_allocated()
    except (AttributeError, RuntimeError) as e:
        meta['workspace'] = None
        print(f'workspaces not cleared: {e}', flush=True)


def build(torch, program, ckpt):
    if program == 'llama':
        model = llama(torch)
        if ckpt:
            model.gradient_checkpointing_enable()
        return model, torch.optim.AdamW(model.parameters(), lr=1e-4)
    if program == 'resnet':
        import torchvision
        model = torchvision.models.resnet50(weights=None).cuda()
        return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    import timm
    model = timm.create_model('vit_base_patch16_224', pretrained=False).cuda()
    if ckpt:
        model.set_grad_checkpointing(True)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def loss_of(torch, program, model, ckpt):
    if program == 'llama':
        x = torch.randint(0, 32000, (4, 512), device='cuda')
        return model(input_ids=x, labels=x).loss
    batch = 32 if program == 'resnet' else 16
    x = torch.randn(batch, 3, 224, 224, device='cuda')
    y = torch.randint(0, 1000, (batch,), device='cuda')
    if program == 'resnet' and ckpt:
        from torch.utils.checkpoint import checkpoint_sequential
        # The stem runs as usual; the four stages are checkpointed. use_reentrant=False failed in backward
        # under _record_memory_history (SystemError), so the reentrant form, whose input (the stem's
        # output) requires grad.
        stem = model.maxpool(model.relu(model.bn1(model.conv1(x))))
        body = torch.nn.Sequential(model.layer1, model.layer2, model.layer3, model.layer4)
        h = checkpoint_sequential(body, 4, stem, use_reentrant=True)
        out = model.fc(torch.flatten(model.avgpool(h), 1))
    else:
        out = model(x)
    return torch.nn.functional.cross_entropy(out, y)


def train(torch, name, meta):
    program = name.split('-')[0]
    ckpt, accum = name.endswith('-ckpt'), name.endswith('-accum')
    model, opt = build(torch, program, ckpt)
    micro = 2 if accum else 1
    # One micro-batch's input: the token ids (labels are the same tensor), or the images and labels.
    meta['input'] = 4 * 512 * 8 if program == 'llama' else (32 if program == 'resnet' else 16) * (3 * 224 * 224 * 4 + 8)
    for step in range(STEPS):
        for _ in range(micro):
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = loss_of(torch, program, model, ckpt) / micro
            loss.backward()
            del loss
        opt.step()
        truth(torch, model, opt, step, meta)
        opt.zero_grad(set_to_none=True)
    workspaces(torch, meta)


def leaks(torch, name, meta):
    """A small MLP trained 10 steps: `leak` keeps each step's output, `warmup` fills a cache over 3 steps."""
    model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history, cache = [], {}
    for step in range(10):
        x = torch.randn(512, 2048, device='cuda')
        out = model(x)
        loss = out.square().mean()
        if name == 'leak':
            history.append(out.detach().clone())  # 4 MiB a step, kept
        if name == 'warmup':
            cache.setdefault(step % 3, torch.empty(3 << 20, dtype=torch.uint8, device='cuda'))
        loss.backward()
        opt.step()
        truth(torch, model, opt, step, meta, history + list(cache.values()))
        opt.zero_grad(set_to_none=True)
        del x, out, loss
    workspaces(torch, meta)
    meta['input'] = 512 * 2048 * 4
    meta['leak_bytes_per_step'] = 512 * 2048 * 4 if name == 'leak' else 0
    return history, cache


RUNS = [p + v for p in PROGRAMS for v in VARIANTS] + ['leak', 'noleak', 'warmup']


def main_all(outdir, par):
    os.makedirs(outdir, exist_ok=True)
    run_all([(['one', name, outdir], '') for name in RUNS], par, os.path.abspath(__file__))


if __name__ == '__main__':
    if sys.argv[1] == 'all':
        main_all(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 4)
    elif sys.argv[1] == 'one':
        name, outdir = sys.argv[2], sys.argv[3]
        meta = {'run': name, 'marker_base': MARKER}
        work = leaks if name in ('leak', 'noleak', 'warmup') else train
        record(name, outdir, lambda torch: work(torch, name, meta), None, meta)
