"""The byte language model from the command line (docs/lm.md, "Command
line"): train --model lm writes the checkpoint, the same bytes at 1, 2 and 7
threads and as Python's; --init resumes a checkpoint onto the uninterrupted
run; generate samples bytes by seed; hostile input refused by name."""

from conftest import ROOT, samebits

WORDS = ("identical bits on every machine the model trains and predicts the same sum in one order "
         "never an atomic float exact rounded once").split()
ARGS = ["n_layer=2", "d_model=16", "n_head=2", "context=16", "batch_size=4", "eval_batches=2",
        "learning_rate=0.01", "dropout=0.1", "random_state=4"]


def _corpus(path, n=5000):
    out, i = [], 0
    while sum(len(w) + 1 for w in out) < n:
        out.append(WORDS[(i * 7 + i // 5) % len(WORDS)])
        i += 1
    data = (" ".join(out)).encode()[:n]
    path.write_bytes(data)
    return data


def _python():
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    return sb


def test_train_threads_python_and_resume(tmp_path):
    data, model = tmp_path / "c.txt", tmp_path / "m.sbm"
    c = _corpus(data)
    outs = []
    for threads in ("1", "2", "7"):
        r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(model), "--steps", "8",
                     "--eval-every", "4", *ARGS, "--threads", threads)
        assert r.returncode == 0, r.stderr
        assert "step 8 held-out loss" in r.stderr and "step 0 held-out loss" in r.stderr
        outs.append(model.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    sb = _python()
    m = sb.ByteLM(n_layer=2, d_model=16, n_head=2, context=16, batch_size=4, eval_batches=2, learning_rate=0.01,
                  dropout=0.1, random_state=4).fit(c, 8, eval_every=4)
    assert m.model_bytes() == outs[0]
    half, resumed = tmp_path / "h.sbm", tmp_path / "r.sbm"
    r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(half), "--steps", "4",
                 "--eval-every", "4", *ARGS)
    assert r.returncode == 0, r.stderr
    r = samebits("train", "--model", "lm", "--data", str(data), "--init", str(half), "--out", str(resumed),
                 "--steps", "4", "--eval-every", "4", "--threads", "2")
    assert r.returncode == 0, r.stderr
    assert resumed.read_bytes() == outs[0]
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == m.model_digest_


def test_generate(tmp_path):
    data, model = tmp_path / "c.txt", tmp_path / "m.sbm"
    _corpus(data)
    r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(model), "--steps", "10", *ARGS)
    assert r.returncode == 0, r.stderr
    outs = []
    for s, t in (("1", "1"), ("1", "7"), ("2", "1")):
        o = tmp_path / ("g%s%s.bin" % (s, t))
        x = samebits("generate", "--model-file", str(model), "--prompt", "the ", "--count", "24", "--seed", s,
                     "--temperature", "0.8", "--threads", t, "--out", str(o))
        assert x.returncode == 0, x.stderr
        outs.append(o.read_bytes())
    assert len(outs[0]) == 24 and outs[0] == outs[1] and outs[0] != outs[2]
    sb = _python()
    m = sb.ByteLM.load(model)
    assert m.generate("the ", 24, temperature=0.8, seed=1) == outs[0]
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-")
    assert p.returncode == 2 and "is an lm model" in p.stderr


def test_refusals(tmp_path):
    data, model = tmp_path / "c.txt", tmp_path / "m.sbm"
    _corpus(data)
    small = tmp_path / "s.txt"
    small.write_bytes(b"abc" * 5)
    r = samebits("train", "--model", "lm", "--data", str(small), "--out", str(model), *ARGS)
    assert r.returncode == 2 and "held out" in r.stderr
    r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(model), "n_head=3", "d_model=16")
    assert r.returncode == 2 and "n_head" in r.stderr
    r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(model), "tie_weights=true")
    assert r.returncode == 2 and "untied" in r.stderr
    r = samebits("train", "--model", "lm", "--data", str(data), "--out", str(model), "--steps", "2", *ARGS)
    assert r.returncode == 0, r.stderr
    r = samebits("train", "--model", "lm", "--data", str(data), "--init", str(model), "--out", str(model),
                 "learning_rate=0.1")
    assert r.returncode == 2 and "its own options" in r.stderr
    r = samebits("train", "--model", "lm", "--data", str(small), "--init", str(model), "--out", str(model))
    assert r.returncode == 2
    r = samebits("generate", "--model-file", str(model), "--prompt", "")
    assert r.returncode == 2 and "empty prompt" in r.stderr
    r = samebits("generate", "--model-file", str(data), "--prompt", "a")
    assert r.returncode == 2
