"""Snapshots for the views beyond one recording: three "ranks" of one job (a small Llama, batches 4, 8, 12),
and one annotated with user_metadata (torch.cuda.memory._set_memory_metadata) and compile_context.
  python3 record-job.py all OUTDIR
"""
import gzip, json, os, pickle, subprocess, sys, time

def train(rank, out, annotate):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(rank)
    kw = dict(max_entries=200000, context="all", stacks="python")
    try:
        torch.cuda.memory._record_memory_history(compile_context=annotate, **kw)
        cc = annotate
    except TypeError:
        torch.cuda.memory._record_memory_history(**kw)
        cc = False
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=2, num_attention_heads=8,
                      num_key_value_heads=4, vocab_size=8000, max_position_embeddings=1024)
    model = LlamaForCausalLM(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = [4, 8, 12][rank % 3]
    norm = torch.compile(lambda t: torch.nn.functional.layer_norm(t, t.shape[-1:])) if annotate else None
    for step in range(4):
        if annotate: torch.cuda.memory._set_memory_metadata(f"step {step} forward")
        ids = torch.randint(0, 8000, (batch, 256 + 64 * step), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
            if norm is not None: loss = loss + norm(torch.randn(batch, 512, device="cuda")).sum() * 0
        if annotate: torch.cuda.memory._set_memory_metadata(f"step {step} backward")
        loss.backward()
        if annotate: torch.cuda.memory._set_memory_metadata(f"step {step} optimizer")
        opt.step(); opt.zero_grad(set_to_none=True)
        del ids, loss
    if annotate: torch.cuda.memory._set_memory_metadata("")
    s = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    with gzip.open(out, "wb") as f: pickle.dump(s, f)
    t = s["device_traces"][0]
    meta = sum(1 for e in t if e.get("user_metadata")); comp = sum(1 for e in t if e.get("compile_context") not in (None, "", "N/A"))
    print(json.dumps({"out": out, "entries": len(t), "user_metadata": meta, "compile_context": comp, "cc_supported": cc,
                      "peak": torch.cuda.max_memory_allocated(), "keys": sorted(t[0].keys()) if t else []}))

if __name__ == "__main__":
    if sys.argv[1] == "one":
        train(int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1")
    else:
        out = sys.argv[2]
        procs = [subprocess.Popen([sys.executable, __file__, "one", str(r), f"{out}/rank_{r}.pickle.gz", "0"]) for r in range(3)]
        procs.append(subprocess.Popen([sys.executable, __file__, "one", "1", f"{out}/annotated.pickle.gz", "1"]))
        for p in procs: p.wait()
        print("codes", [p.returncode for p in procs])
