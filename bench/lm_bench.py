"""The byte-level language model on real text (issue 30: a model of at
least two blocks trained 128 steps; held-out loss falls, the seed's record
5.54 to 2.84), its training speed beside PyTorch's CPU float32 where torch
is importable in this Python (the same architecture, same shapes, same
optimizer settings; PyTorch draws its own initialization and batches, so its
losses are shown, not compared bit for bit).

Corpus: every regular file directly under /usr/share/common-licenses/ (Debian's
base-files package: every Debian machine has it), symbolic links skipped (GPL
-> GPL-3 and the like would repeat text), read as bytes in sorted file-name
order and concatenated as they are. The model holds out the last
validation_fraction (0.1) of the bytes; training windows come from the rest.

Model (both): n_layer 2, d_model 64, n_head 4, context 64, batch_size 16,
AdamW learning_rate 3e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01
(matrices and embeddings), clip_norm 1, dropout 0, random_state --seed;
pre-norm GPT-2 blocks (layer norm, causal attention, GELU tanh MLP of 4
d_model), learned positional embedding, untied head.

Measured: samebits' held-out loss (8 batches of 16 windows of the held-out
bytes, fixed by the seed) at step 0 and after --steps; steps per second of
the training alone (the held-out evaluations outside the clock) at
--threads; the checkpoint's digest; the first --check steps run again at 1
thread must give the same digest as at --threads. PyTorch (if importable):
steps per second at torch.set_num_threads(--threads), float32, deterministic
algorithms on, eager; its held-out loss on the same held-out windows' rule
(its own draws).

--device opencl|cuda (the GPU host; docs/lm.md "Devices"): samebits trains on
that device (ByteLM(device=...)), the identity check compares its first --check
steps with the CPU's at 1 thread (the digest must be equal), and PyTorch runs
on CUDA (torch.cuda, deterministic algorithms on, CUBLAS_WORKSPACE_CONFIG set)
where it is available, else on the CPU (said in the results).

PyTorch is run twice where importable: eager, and through torch.compile (a
compile failure is reported by name in the results, never hidden). Every
steps-per-second figure (samebits' and PyTorch's) times steps 2 to --steps: the
first step (device setup, compilation) is outside the clock.

--check-threads: the CPU reference's threads for the identity check (default
1). --resume (a device run): the step-(steps/2) checkpoint written on the CPU is
read back and trained to --steps on --device, and the other way round; both must
give the uninterrupted device run's model digest (recorded).

Run: python3 bench/lm_bench.py [--threads 2] [--steps 128] [--seed 0] [--device cpu] [--check 16]
     [--check-threads 1] [--resume] [--out bench/results]
Results: bench/results/lm-DATE-COMMIT[-DEVICE].{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import _common  # noqa: E402
import samebits  # noqa: E402

CONFIG = dict(n_layer=2, d_model=64, n_head=4, context=64, batch_size=16, learning_rate=3e-3, weight_decay=0.01,
              clip_norm=1.0, dropout=0.0, eval_batches=8)


def run_samebits(data, steps, threads, seed, device="cpu"):
    samebits.set_num_threads(threads)
    try:
        m = samebits.ByteLM(random_state=seed, device=device, **CONFIG)
        m.fit(data, 0)  # a fresh model: step 0
        h0 = m.evaluate(data)
        m.fit(data, 1)  # the first step (device setup) outside the clock, as PyTorch's
        t = time.perf_counter()
        m.fit(data, steps - 1)
        secs = time.perf_counter() - t
        h1 = m.evaluate(data)
        return m, h0, h1, secs
    finally:
        samebits.set_num_threads(0)


def run_torch(data, steps, threads, seed, gpu=False, compiled=False):
    """The same architecture in PyTorch, float32, eager or torch.compile'd
    (on CUDA when gpu and torch.cuda is available); None if torch is not
    importable, a string naming the failure if compiling fails. The clock
    starts after the first step (which compiles, for compiled), so it times
    steps - 1 steps."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    dev = "cuda" if gpu and torch.cuda.is_available() else "cpu"
    c = CONFIG
    d, T, B, H = c["d_model"], c["context"], c["batch_size"], c["n_head"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            sh = lambda t: t.view(x.shape[0], x.shape[1], H, d // H).transpose(1, 2)  # noqa: E731
            a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(x.shape))
            return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(256, d), nn.Embedding(T, d)
            self.blocks = nn.ModuleList([Block() for _ in range(c["n_layer"])])
            self.lnf, self.head = nn.LayerNorm(d), nn.Linear(d, 256, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            return self.head(self.lnf(x))

    model = LM().to(dev)
    fwd = model
    if compiled:
        try:
            fwd = torch.compile(model)
        except Exception as e:  # noqa: BLE001 (reported, not hidden)
            return "torch.compile failed: %s" % e
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]}, {"params": rest, "weight_decay": 0}],
                            lr=c["learning_rate"], betas=(0.9, 0.999), eps=1e-8)
    buf = torch.tensor(list(data), dtype=torch.long)  # windows drawn on the host, moved per batch
    nt = int(len(data) * 0.9)
    g = torch.Generator().manual_seed(seed)

    def batch(src, lo, hi):
        off = torch.randint(lo, hi - T - 1, (B,), generator=g)
        return (torch.stack([src[o:o + T] for o in off]).to(dev), torch.stack([src[o + 1:o + T + 1] for o in off]).to(dev))

    def heldout():
        with torch.no_grad():
            return sum(F.cross_entropy(fwd(x).view(-1, 256), y.view(-1)).item()
                       for x, y in (batch(buf, nt, len(data)) for _ in range(c["eval_batches"]))) / c["eval_batches"]

    def step():
        x, y = batch(buf, 0, nt)
        loss = F.cross_entropy(fwd(x).view(-1, 256), y.view(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_norm"])
        opt.step()

    try:
        h0 = heldout()
        step()
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(steps - 1):
            step()
        if dev == "cuda":
            torch.cuda.synchronize()
        secs = time.perf_counter() - t
        return torch.__version__ + " on " + dev + (", compiled" if compiled else ", eager"), h0, heldout(), secs
    except Exception as e:  # noqa: BLE001 (a compile failure is reported by name)
        if not compiled:
            raise
        return "torch.compile failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=128)
    ap.add_argument("--check", type=int, default=16)
    ap.add_argument("--check-threads", type=int, default=1)
    ap.add_argument("--resume", action="store_true",
                    help="also resume across devices at steps/2: cpu then --device, and --device then cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    names, data = _common.license_corpus()
    commit, dirty = _common.git_commit(short=True)
    m, h0, h1, secs = run_samebits(data, a.steps, a.threads, a.seed, a.device)
    digest = m.model_digest_
    # identity: the first --check steps at --threads (on --device) and at 1 thread on the cpu
    ca = samebits.ByteLM(random_state=a.seed, device=a.device, **CONFIG)
    samebits.set_num_threads(a.threads)
    ca.fit(data, a.check)
    samebits.set_num_threads(a.check_threads)
    cb = samebits.ByteLM(random_state=a.seed, **CONFIG).fit(data, a.check)
    samebits.set_num_threads(0)
    same = ca.model_digest_ == cb.model_digest_
    resumed = {}
    if a.resume and a.device != "cpu":
        # the step-(steps/2) checkpoint written on one device, read back and trained on the other
        half = a.steps // 2
        samebits.set_num_threads(a.threads)
        for first, second in (("cpu", a.device), (a.device, "cpu")):
            r = samebits.ByteLM(random_state=a.seed, device=first, **CONFIG).fit(data, half)
            path = os.path.join(a.out, ".lm-resume-%d.sbm" % os.getpid())
            os.makedirs(a.out, exist_ok=True)
            r.save(path)
            r2 = samebits.ByteLM.load(path)
            os.remove(path)
            r2.device = second
            r2.fit(data, a.steps - half)
            resumed["%s->%s" % (first, second)] = r2.model_digest_ == digest
        samebits.set_num_threads(0)
    tr = run_torch(data, a.steps, a.threads, a.seed, gpu=a.device != "cpu")
    tc = run_torch(data, a.steps, a.threads, a.seed, gpu=a.device != "cpu", compiled=True) if tr else None
    cpu = "unknown"
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load_avg = "%.2f %.2f %.2f" % os.getloadavg()
    head = {"date": datetime.date.today().isoformat(), "commit": commit + ("-dirty" if dirty else ""),
            "machine": "%s, %d logical CPUs (%s)" % (cpu, os.cpu_count(), platform.platform()),
            "load_avg_after": load_avg, "device": a.device, "threads": a.threads, "steps": a.steps, "seed": a.seed, "config": CONFIG,
            "corpus": {"dir": _common.LICENSES, "files": names, "bytes": len(data)},
            "samebits": samebits.version(), "profile": samebits.profile_version(),
            "torch": tr[0] if tr else None, "timed_steps": a.steps - 1}
    n = a.steps - 1  # timed steps (the first outside the clock)
    row = {"heldout_loss_step0": h0, "heldout_loss_final": h1, "train_seconds": secs, "steps_per_second": n / secs,
           "n_params": m.n_params_, "model_digest": digest, "check_steps": a.check, "check_threads": a.check_threads,
           "same_digest_as_cpu": same, "resumed_equal": resumed,
           "train_loss_first": m.train_loss_[0], "train_loss_last": m.train_loss_[-1]}
    if tr:
        row.update(torch_heldout_loss_step0=tr[1], torch_heldout_loss_final=tr[2], torch_seconds=tr[3],
                   torch_steps_per_second=n / tr[3], ratio_steps_per_second=(n / secs) / (n / tr[3]))
    if isinstance(tc, tuple):
        row.update(torch_compiled=tc[0], torch_compiled_heldout_loss_final=tc[2], torch_compiled_seconds=tc[3],
                   torch_compiled_steps_per_second=n / tc[3], ratio_compiled_steps_per_second=(n / secs) / (n / tc[3]))
    elif tc:
        row.update(torch_compiled=tc)
    print(json.dumps(row), flush=True)
    base = "lm-%s-%s%s" % (head["date"], head["commit"], "" if a.device == "cpu" else "-" + a.device)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, base + ".json"), "w") as f:
        json.dump({"header": head, "rows": [row]}, f, indent=1)
    with open(os.path.join(a.out, base + ".md"), "w") as f:
        f.write("# The byte-level language model on Debian's license texts (%s)\n\n" % head["date"])
        f.write("commit %s; %s; load average after the run %s; device %s; %d threads; samebits %s (%s). Generated "
                "by bench/lm_bench.py (its docstring: corpus, model and what is timed).\n\n"
                % (head["commit"], head["machine"], load_avg, a.device, a.threads, head["samebits"], head["profile"]))
        f.write("Corpus: the %d regular files of %s (%s), %d bytes; the last 10%% held out. Model: %d blocks, "
                "d_model %d, %d heads, context %d, batch %d (%d parameters), AdamW lr %g, %d steps, seed %d.\n\n"
                % (len(names), _common.LICENSES, ", ".join(names), len(data), CONFIG["n_layer"], CONFIG["d_model"],
                   CONFIG["n_head"], CONFIG["context"], CONFIG["batch_size"], m.n_params_, CONFIG["learning_rate"],
                   a.steps, a.seed))
        f.write("| | held-out loss step 0 | held-out loss step %d | steps/s | model digest (first 12) |\n" % a.steps)
        f.write("| --- | ---: | ---: | ---: | --- |\n")
        f.write("| samebits | %.4f | %.4f | %.3f | `%s` |\n" % (h0, h1, n / secs, digest[:12]))
        if tr:
            f.write("| PyTorch %s (float32, deterministic) | %.4f | %.4f | %.3f | |\n"
                    % (tr[0], tr[1], tr[2], n / tr[3]))
            if isinstance(tc, tuple):
                f.write("| PyTorch %s (float32, deterministic) | %.4f | %.4f | %.3f | |\n"
                        % (tc[0], tc[1], tc[2], n / tc[3]))
            f.write("\nSteps per second over steps 2 to %d (the first step, device setup and compilation, outside "
                    "the clock). Ratio samebits / PyTorch eager steps per second: %.3f" % (a.steps, row["ratio_steps_per_second"]))
            if isinstance(tc, tuple):
                f.write("; samebits / PyTorch compiled: %.3f" % row["ratio_compiled_steps_per_second"])
            elif tc:
                f.write("; PyTorch compiled: not measured (%s)" % tc)
            f.write(".\n\n")
        else:
            f.write("\nPyTorch is not importable in this Python (no torch installed on this machine): samebits "
                    "is recorded alone; no speed ratio.\n\n")
        f.write("The seed's record: 5.54 to 2.84 over 128 steps. The first %d steps on the cpu at %d thread(s): the "
                "same model digest as on %s at %d threads: %s.\n" % (a.check, a.check_threads, a.device, a.threads,
                                                                      "yes" if same else "NO"))
        for k, v in resumed.items():
            f.write("Resumed %s (a step-%d checkpoint written on the first, read back and trained to step %d on the "
                    "second): the uninterrupted run's model digest: %s.\n" % (k, a.steps // 2, a.steps, "yes" if v else "NO"))


if __name__ == "__main__":
    main()
