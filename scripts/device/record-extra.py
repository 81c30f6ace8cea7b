"""Records the real-program snapshots that ../shared/traces-real lacks, on a machine with torch 2.11 and
a CUDA GPU: CUDA graphs and a MemPool (private pools, released), empty_cache() between phases of a
real training loop, and snapshots without history (torch.cuda.memory_snapshot() and _snapshot()
without _record_memory_history). One process per workload, as PYTORCH_CUDA_ALLOC_CONF is read once.

  python3 scripts/device/record-extra.py all OUTDIR      # every workload, one process each
  python3 scripts/device/record-extra.py one NAME OUTDIR

Each writes NAME.pickle.gz (as _dump_snapshot would) and NAME.json (manifest entry: memory_stats at
the end, like ../shared/traces-real/MANIFEST.json).
"""
import gzip, json, os, pickle, random, subprocess, sys, time

MiB = 1 << 20


def w_graphs(torch, rng):
    """torch.cuda.graph capture into a private pool, replays, default-pool traffic around it, then a
    torch.cuda.MemPool used through use_mem_pool; the graph is deleted and empty_cache() releases it."""
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    x = torch.randn(512, 1024, device="cuda")
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
        for _ in range(4):
            x.copy_(torch.randn_like(x))
            g.replay()
            junk = [torch.empty(rng.choice([1, 3, 7, 12, 30]) * MiB, dtype=torch.uint8, device="cuda") for _ in range(6)]
            del junk
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        kept = [torch.empty(rng.choice([2, 5, 9, 24]) * MiB, dtype=torch.uint8, device="cuda") for _ in range(8)]
    del kept[::2]
    other = [torch.empty(rng.choice([2, 5, 9]) * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]
    with torch.cuda.use_mem_pool(pool):
        kept += [torch.empty(rng.choice([2, 5, 9]) * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]
    del g, out, other
    torch.cuda.empty_cache()
    z = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda")
    del z


def w_phases(torch, rng):
    """A CNN trained, then torch.cuda.empty_cache() before an evaluation phase with larger batches, then
    empty_cache() again and more training: the between-phases pattern."""
    import torchvision
    model = torchvision.models.resnet18(weights=None).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for phase in range(3):
        if phase == 1:
            model.eval()
            with torch.no_grad():
                for _ in range(4):
                    B = rng.choice([96, 128])
                    model(torch.randn(B, 3, 160, 160, device="cuda"))
            model.train()
        else:
            for _ in range(5):
                B = rng.choice([16, 32, 48])
                x = torch.randn(B, 3, 192, 192, device="cuda")
                loss = model(x).float().square().mean()
                loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
                del x, loss
        torch.cuda.empty_cache()


def state(torch, rng):
    xs = [torch.empty(rng.choice([1, 3, 5, 17, 40]) * MiB, dtype=torch.uint8, device="cuda") for _ in range(20)]
    del xs[::3]
    return xs


RECORDED = {"graphs": w_graphs, "phases": w_phases}


def one(name, outdir):
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    rng = random.Random(sum(map(ord, name)) + 7)
    t0 = time.time()
    if name == "segments_only":
        keep = state(torch, rng)
        snap = torch.cuda.memory_snapshot()  # a list of segments, no traces
    elif name == "no_history":
        keep = state(torch, rng)
        snap = torch.cuda.memory._snapshot()  # history never recorded: empty device_traces
    else:
        torch.cuda.memory._record_memory_history(max_entries=10_000_000, stacks="python")
        RECORDED[name](torch, rng)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
    stats = torch.cuda.memory_stats()
    with gzip.open(os.path.join(outdir, name + ".pickle.gz"), "wb", compresslevel=6) as f:
        pickle.dump(snap, f)
    segments = snap if isinstance(snap, list) else snap["segments"]
    traces = [] if isinstance(snap, list) else snap["device_traces"]
    rec = {"file": name + ".pickle.gz", "workload": name, "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "torch": torch.__version__, "device_total": torch.cuda.get_device_properties(0).total_memory,
           "trace_events": len(traces[0]) if traces else 0, "ooms": 0, "seconds": round(time.time() - t0, 1),
           "stats_at_end": dict(stats), "pools": sorted({str(s.get("segment_pool_id")) for s in segments}),
           "segments_only": isinstance(snap, list), "no_history": not traces or not traces[0]}
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(rec, f)
    print(f"{name}: {rec['trace_events']} events, pools {rec['pools']}, {rec['seconds']} s", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "one":
        one(sys.argv[2], sys.argv[3])
    else:
        outdir = sys.argv[2]
        os.makedirs(outdir, exist_ok=True)
        procs = [subprocess.Popen([sys.executable, __file__, "one", n, outdir]) for n in ["graphs", "phases", "segments_only", "no_history"]]
        for p in procs:
            p.wait()
            if p.returncode:
                print(f"job failed: exit {p.returncode}", flush=True)
