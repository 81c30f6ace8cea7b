"""Records the real-program snapshots of issue 33 ("every figure on screen is true"), on a machine with
torch 2.11, timm and transformers and a CUDA GPU. One process per job, as PYTORCH_CUDA_ALLOC_CONF is
read once; every model is built with random weights (nothing is downloaded).

  python3 scripts/device/record-truth.py all OUTDIR
  python3 scripts/device/record-truth.py one NAME CONF OUTDIR

Jobs:
  vit_oom   timm vit_base_patch16_224 training under a 6 GiB cap (set_per_process_memory_fraction), the
            batch growing each step until an OOM; an out-of-memory observer dumps the snapshot at the OOM,
            as PyTorch's docs recommend. Recorded under the defaults, expandable_segments:True and
            max_split_size_mb:128: the same program (same seed), so a what-if on the default dump can be
            held against what the program really did under the other config, OOM included, past the
            request where the default dump ends.
  lss40     torchvision resnet50 training, 8 steps, under large_segment_size_mb:40 (which raises
            max_split_size_mb's floor to 40 MiB): a snapshot small enough (< 256 KB) to travel inside a
            share link.
  beam      the Llama of record-real-workloads.py in eval, model.generate with num_beams=4 (beam search).

Each writes NAME__TAG.pickle.gz (as _dump_snapshot would) and NAME__TAG.json (its manifest entry:
memory_stats at the end, or at the OOM for an OOM dump, and the cap that applied).
"""
import gzip, json, os, pickle, random, subprocess, sys, time

GiB = 1 << 30
JOBS = [("vit_oom", ""), ("vit_oom", "expandable_segments:True"), ("vit_oom", "max_split_size_mb:128"),
        ("lss40", "large_segment_size_mb:40"), ("beam", "")]
VIT_CAP = 6 * GiB


def tagof(conf):
    return conf.replace(':', '=').replace(',', '+') or 'default'


def w_vit_oom(torch, rng):
    import timm
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(VIT_CAP / total)
    model = timm.create_model("vit_base_patch16_224", pretrained=False).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(40):
        B = 8 + 8 * step + rng.choice([0, 4])
        x = torch.randn(B, 3, 224, 224, device="cuda"); y = torch.randint(0, 1000, (B,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, y, loss


def w_lss40(torch, rng, steps=8):
    import torchvision
    model = torchvision.models.resnet50(weights=None).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        B = rng.choice([16, 32, 48]); R = rng.choice([160, 192, 224])
        x = torch.randn(B, 3, R, R, device="cuda"); y = torch.randint(0, 1000, (B,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        del x, y, loss


def w_beam(torch, rng, rounds=3):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
    model = LlamaForCausalLM(cfg).cuda().to(torch.bfloat16).eval()
    with torch.no_grad():
        for _ in range(rounds):
            B = rng.choice([2, 4]); L = rng.choice([64, 200])
            ids = torch.randint(3, 32000, (B, L), device="cuda")
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=rng.choice([24, 48]),
                           num_beams=4, do_sample=False, pad_token_id=0, eos_token_id=None)
            del ids


WORKLOADS = {"vit_oom": w_vit_oom, "lss40": w_lss40, "beam": w_beam}


def one(name, conf, outdir):
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    rng = random.Random(sum(map(ord, name)) + 33)
    torch.cuda.memory._record_memory_history(max_entries=10_000_000, stacks="python")
    state = {"snap": None, "stats": None}

    def observer(device, alloc, device_alloc, device_free):
        if state["snap"] is None:
            state["snap"] = torch.cuda.memory._snapshot(); state["stats"] = torch.cuda.memory_stats()
    torch._C._cuda_attach_out_of_memory_observer(observer)
    t0 = time.time(); err = None
    try:
        WORKLOADS[name](torch, rng)
    except torch.cuda.OutOfMemoryError as e:
        err = str(e).splitlines()[0][:300]
    torch.cuda.synchronize()
    snap = state["snap"] or torch.cuda.memory._snapshot()
    stats = state["stats"] or torch.cuda.memory_stats()
    total = torch.cuda.get_device_properties(0).total_memory
    tag = f"{name}__{tagof(conf)}"
    with gzip.open(os.path.join(outdir, tag + ".pickle.gz"), "wb", compresslevel=9) as f:
        pickle.dump(snap, f)
    trace = snap["device_traces"][0]
    rec = {"file": tag + ".pickle.gz", "workload": name, "conf": conf, "torch": torch.__version__,
           "device_total": total, "trace_events": len(trace),
           "ooms": sum(1 for e in trace if e["action"] == "oom"), "oom_error": err,
           "seconds": round(time.time() - t0, 1), "stats_at_end": dict(stats),
           "allocator_settings": snap.get("allocator_settings"),
           "pools": sorted({str(s.get("segment_pool_id")) for s in snap["segments"]})}
    if name == "vit_oom":
        rec["allowed_memory_maximum"] = int((VIT_CAP / total) * float(total))
    with open(os.path.join(outdir, tag + ".json"), "w") as f:
        json.dump(rec, f)
    print(f"{tag}: {rec['trace_events']} events, {rec['ooms']} ooms, reserved_peak="
          f"{stats.get('reserved_bytes.all.peak', 0) >> 20} MiB, {rec['seconds']} s"
          + (f", OOM: {err[:100]}" if err else ""), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "one":
        one(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        outdir = sys.argv[2]
        os.makedirs(outdir, exist_ok=True)
        procs = []
        for name, conf in JOBS:
            env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
            if conf: env["PYTORCH_CUDA_ALLOC_CONF"] = conf
            else: env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            procs.append((subprocess.Popen([sys.executable, __file__, "one", name, conf, outdir], env=env), name, conf))
        for p, name, conf in procs:
            p.wait()
            if p.returncode: print(f"job failed: {name} {conf!r} exit {p.returncode}", flush=True)
