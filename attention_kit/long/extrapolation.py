"""Notebook 09, *Positions for long texts*: the length-extrapolation experiment.

One task whose answer depends on relative position, the same small model trained at one length
with each position scheme, then evaluated on longer texts (Press et al. 2022 did this with
language models and perplexity).

The task is notebook 08's repeated random sequences (:func:`attention_kit.heads.tasks.repeated_sequences`):
a random segment of 4 to 12 distinct tokens repeated to the end. Once the current token has
occurred before, the next token is predictable by looking back to that occurrence and copying
what followed it (an induction head: a head that finds "the token one back" and one that matches
content). The first token of the first repeat is not: its input token is new (:func:`predictable`
tells the two apart, and :func:`accuracy` scores them separately). Nothing in it depends on the absolute position, so a model that learned it at length 24
*could* do it at any length; whether it does depends on how it was told about positions.

The model is notebook 08's attention-only decoder (two layers of two heads, ``d_model = 32``)
without its table of learned positions; :data:`SCHEMES` says what each run passes to
:func:`attention_kit.decoder.block.decoder_forward`. A training script of the course's
repository (not shipped in a student edition) trains them all and writes
``attention_kit/data/extrapolation.npz`` (:func:`load_extrapolation`).
"""

from __future__ import annotations

from importlib import resources

import numpy as np
from threadpoolctl import threadpool_limits

from ..decoder.block import decoder_forward
from ..errors import ParameterError, check_count
from ..heads.model import AttnOnlyConfig, init_attention_only
from ..heads.tasks import repeated_sequences

__all__ = ["SCHEMES", "TASK", "MODEL", "TRAINING", "init_model", "batch", "predictable", "accuracy",
           "load_extrapolation"]

#: What each scheme passes to decoder_forward. "alibi" uses the paper's slopes (for 2 heads
#: 2^-4 and 2^-8); "alibi 1, 0" one steep head (slope 1) and one without any penalty.
SCHEMES = {
    "sinusoidal": {"positions": "sinusoidal"},
    "rope": {"positions": "rope"},
    "alibi": {"positions": "alibi"},
    "alibi 1, 0": {"positions": "alibi", "slopes": (1.0, 0.0)},
}
#: The task: vocabulary, training length, the range of the repeated segment's length.
TASK = {"vocab": 64, "length": 24, "periods": (4, 12)}
#: The model (notebook 08's attention-only decoder, its learned positions left out).
MODEL = AttnOnlyConfig(vocab=TASK["vocab"], d_model=32, n_heads=(2, 2), d_head=16, max_len=TASK["length"])
#: Training: Adam steps, learning rate, batch size.
TRAINING = {"steps": 1500, "lr": 3e-3, "batch": 32}


def init_model(seed: int) -> dict[str, np.ndarray]:
    """Fresh parameters of :data:`MODEL`, without the learned position table (no scheme uses it)."""
    params = init_attention_only(MODEL, rng=np.random.default_rng(seed))
    del params["P"]
    return params


def batch(rng: np.random.Generator, length: int = TASK["length"], size: int = TRAINING["batch"]):
    """A training batch ``(ids, targets)``, both (size, length)."""
    ids, targets, _ = repeated_sequences(rng, size, length=length, vocab=TASK["vocab"],
                                         periods=TASK["periods"])
    return ids, targets


def predictable(ids: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which targets of repeated sequences can be predicted, and how: ``(induction, boundary)``,
    two boolean arrays shaped like ``ids`` (batch, length).

    ``induction``: the current token occurred before, so copying what followed it gives the target
    (positions ``i >= period``). ``boundary``: the first token of the first repeat (``i = period - 1``):
    the current token is new, so no induction rule can find the target; it is the sequence's first
    token again, which only a guess that the segment restarts gets right.
    """
    ids, targets = np.asarray(ids), np.asarray(targets)
    n = ids.shape[1]
    seen = (ids[:, :, None] == ids[:, None, :]) & np.tril(np.ones((n, n), bool), -1)[None]  # (b, n, n): j < i
    induction = seen.any(axis=2)  # (batch, length): token i occurred before
    boundary = ~induction & (targets == ids[:, :1])  # new token, and the next is the first again
    return induction, boundary


def accuracy(params: dict, scheme: str, length: int, *, n: int = 128, seed: int = 123,
             positions: str = "induction", window: int | None = None) -> float:
    """Share of the predictable tokens that the model gets right, greedily, on ``n`` fresh
    sequences of ``length`` tokens.

    ``positions="induction"``: the targets induction can predict (the current token occurred
    before); ``"boundary"``: the first token of the first repeat only (see :func:`predictable`).
    ``window``: each query sees only the last ``window`` keys (no distance beyond ``window - 1``).
    """
    if scheme not in SCHEMES:
        raise ParameterError(f"scheme must be one of {list(SCHEMES)}, got {scheme!r}")
    if positions not in ("induction", "boundary"):
        raise ParameterError(f"positions must be 'induction' or 'boundary', got {positions!r}")
    length, n = check_count(length, "length", minimum=TASK["periods"][1]), check_count(n, "n")
    ids, targets, _ = repeated_sequences(np.random.default_rng(seed), n, length=length,
                                         vocab=TASK["vocab"], periods=TASK["periods"])
    with threadpool_limits(limits=1, user_api="blas"):
        logits = decoder_forward(params, ids, window=window, **SCHEMES[scheme])[0]  # (n, length, vocab)
    where = predictable(ids, targets)[positions == "boundary"]
    return float((logits.argmax(axis=-1) == targets)[where].mean())


def load_extrapolation() -> dict:
    """What the training run wrote: ``params`` {scheme: weights of seed 0},
    ``lengths``, ``seeds``, ``accuracy`` (scheme, seed, length), ``losses`` (scheme, seed, steps)
    smoothed over ``every`` steps, and ``first_losses`` (scheme, first steps) of seed 0, exact."""
    with resources.as_file(resources.files("attention_kit").joinpath("data/extrapolation.npz")) as f:
        with np.load(f) as z:
            out = {k: z[k] for k in z.files if not k.startswith("param/")}
            params: dict = {s: {} for s in SCHEMES}
            for k in z.files:
                if k.startswith("param/"):
                    _, s, name = k.split("/", 2)
                    params[s][name] = z[k].astype(np.float64)
    out["schemes"] = [str(s) for s in out["schemes"]]
    out["params"] = params
    return out
