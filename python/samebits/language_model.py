"""The byte-level language model (docs/lm.md): a small pre-norm transformer
over raw bytes trained by AdamW, identical bits on every machine and thread
count, checkpoints that resume on the uninterrupted trajectory.

ByteLM is named for what it models (bytes, vocabulary 256); scikit-learn has
no language model to borrow names from, so its parameters are the C
library's (n_layer, d_model, n_head, context, batch_size, learning_rate, ...:
nanoGPT's and PyTorch AdamW's spellings). Nothing numeric is computed here.
"""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int, c_int64, c_size_t, c_uint64, c_void_p

from ._base import HandleModel, declare_handle_functions
from ._lib import Handle, check, lib, params as _params
from .errors import InvalidArgumentError, InvalidInputError, not_fitted

_P = POINTER
declare_handle_functions("sb_lm", {
    "sb_lm_create": (c_int, [c_void_p, _P(c_void_p)]),
    "sb_lm_train": (c_int, [c_void_p, c_char_p, c_int64, c_int64, c_int64]),
    "sb_lm_set_device": (c_int, [c_void_p, c_char_p]),
    "sb_lm_evaluate": (c_int, [c_void_p, c_char_p, c_int64, _P(c_float)]),
    "sb_lm_generate": (c_int, [c_void_p, c_char_p, c_int64, c_int64, c_double, c_uint64, c_void_p])})

_PARAMS = ("n_layer", "d_model", "n_head", "context", "batch_size", "learning_rate", "beta_1", "beta_2", "epsilon",
           "weight_decay", "dropout", "clip_norm", "validation_fraction", "eval_batches", "random_state")


def _bytes(data, what):
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise InvalidInputError("%s must be bytes or str, not %s" % (what, type(data).__name__))


class ByteLM(HandleModel):
    """A byte-level transformer language model (docs/lm.md).

    fit(corpus, steps) trains steps AdamW steps on corpus (bytes, or str as
    UTF-8) from the current state: a fresh model the first time, then on from
    where it stopped (the same corpus; another is refused by name), so
    fit(c, 64); fit(c, 64) equals fit(c, 128) byte for byte, and so does a
    load of the step-64 checkpoint followed by fit(c, 64). random_state keys
    every Philox draw (initialization, batches, dropout). device ("cpu",
    "opencl", "cuda") is where fit runs its steps, with the same bytes: a
    run's choice, not the checkpoint's, so a model loaded from a checkpoint
    written on one device fits on another on the same trajectory."""

    _C_PREFIX = "sb_lm"

    def __init__(self, n_layer=2, d_model=64, n_head=4, context=64, batch_size=16, *, learning_rate=1e-3,
                 beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.01, dropout=0.0, clip_norm=1.0,
                 validation_fraction=0.1, eval_batches=8, random_state=0, device="cpu"):
        self.n_layer = n_layer
        self.d_model = d_model
        self.n_head = n_head
        self.context = context
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.weight_decay = weight_decay
        self.dropout = dropout
        self.clip_norm = clip_norm
        self.validation_fraction = validation_fraction
        self.eval_batches = eval_batches
        self.random_state = random_state
        self.device = device
        self._handle = None

    def get_params(self, deep=True):
        p = {k: getattr(self, k) for k in _PARAMS}
        p["device"] = self.device
        return p

    def set_params(self, **kw):
        for k, v in kw.items():
            if k not in _PARAMS and k != "device":
                raise InvalidArgumentError("ByteLM has no parameter %r" % k)
            setattr(self, k, v)
        if any(k != "device" for k in kw):  # the device moves no bit: the state is kept
            self._handle = None
        return self

    def _pairs(self):
        rs = self.random_state
        if isinstance(rs, bool) or not isinstance(rs, int) or rs < 0:
            raise InvalidArgumentError("random_state=%r must be an int >= 0" % (rs,))
        pairs = []
        for k in _PARAMS:
            v = getattr(self, k)
            if isinstance(v, bool):
                raise InvalidArgumentError("%s=%r must be a number" % (k, v))
            pairs.append((k, repr(float(v)) if isinstance(v, float) else str(int(v))))
        return pairs

    def fit(self, corpus, steps=128, eval_every=0):
        """Train steps more steps on corpus; eval_every > 0 records the held-out
        loss at step 0 and every eval_every steps (heldout_loss_)."""
        data = _bytes(corpus, "corpus")
        if self._handle is None:
            h, p = c_void_p(), _params(self._pairs())  # p held through the call
            check(lib.sb_lm_create(p.ptr, byref(h)))
            self._handle = Handle(h, lib.sb_lm_free)
        check(lib.sb_lm_set_device(self._handle.ptr, str(self.device).encode()))
        check(lib.sb_lm_train(self._handle.ptr, data, len(data), int(steps), int(eval_every)))
        return self

    def _check_fitted(self):
        if self._handle is None:
            raise not_fitted("this ByteLM is not fitted yet; call fit first")

    def _int(self, name):
        v = c_int64(0)
        check(lib.sb_lm_get_int(self._handle.ptr, name.encode(), byref(v)))
        return v.value

    def _f32(self, name):
        n = c_size_t(0)
        check(lib.sb_lm_get_f32(self._handle.ptr, name.encode(), None, 0, byref(n)))
        out = (c_float * max(n.value, 1))()
        if n.value:
            check(lib.sb_lm_get_f32(self._handle.ptr, name.encode(), out, n.value, byref(n)))
        return [float(out[i]) for i in range(n.value)]

    @property
    def step_(self):
        self._check_fitted()
        return self._int("step")

    @property
    def n_params_(self):
        self._check_fitted()
        return self._int("n_params")

    @property
    def train_loss_(self):
        """The training loss of every step (nats per byte)."""
        self._check_fitted()
        return self._f32("train_loss")

    @property
    def heldout_loss_(self):
        """[(step, held-out loss)] as recorded by fit's eval_every."""
        self._check_fitted()
        losses = self._f32("heldout_loss")
        return [(self._int("heldout_step_%d" % i), v) for i, v in enumerate(losses)]

    def tensor(self, name):
        """A parameter tensor ("wte", "h0.w_qkv", ...) or a moment ("adam_m.<name>") as a flat list."""
        self._check_fitted()
        return self._f32(name)

    def evaluate(self, corpus):
        """The held-out loss on corpus's held-out bytes (nats per byte)."""
        self._check_fitted()
        data = _bytes(corpus, "corpus")
        out = c_float(0)
        check(lib.sb_lm_evaluate(self._handle.ptr, data, len(data), byref(out)))
        return out.value

    def generate(self, prompt, n=200, temperature=1.0, seed=0):
        """n bytes sampled after prompt (bytes, or str as UTF-8) by Philox draws of seed."""
        self._check_fitted()
        p = _bytes(prompt, "prompt")
        buf = ctypes.create_string_buffer(max(int(n), 1))
        check(lib.sb_lm_generate(self._handle.ptr, p, len(p), int(n), float(temperature), int(seed), buf))
        return buf.raw[:int(n)]

    def save(self, path):
        """The checkpoint (parameters, both AdamW moments, step) as a model file."""
        self.save_model(path)

    def _adopt(self, handle):
        self._handle = handle
        for k in ("n_layer", "d_model", "n_head", "context", "batch_size"):
            setattr(self, k, self._int(k))
        return self

    @classmethod
    def load(cls, path):
        """A saved checkpoint; fit goes on from its step. Options other than
        the shapes are the checkpoint's (get_params shows the shapes only)."""
        h = c_void_p()
        check(lib.sb_lm_load(str(path).encode(), byref(h)))
        return cls()._adopt(Handle(h, lib.sb_lm_free))

    @classmethod
    def from_bytes(cls, data):
        m = cls()
        return m._adopt(m._handle_from_bytes(bytes(data)))

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("device", "cpu")  # a pickle from before the device path
