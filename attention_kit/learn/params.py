"""Notebooks 05-07: one convention for every model's parameters, and save / load for all of them.

A model is two things:

* a **config**, a frozen dataclass of its sizes (:class:`~attention_kit.learn.tiny_lm.TinyLMConfig`,
  :class:`~attention_kit.scale.tiny_decoder.DecoderConfig`, ...);
* its **parameters**, a flat dict ``{name: ndarray}``, what the optimisers update in place and what
  a gradient dict mirrors name for name. A decoder's names are ``"E"`` (embeddings),
  ``"l{l}.ln1.g"``, ``"l{l}.attn.W_q"``, ..., ``"l{l}.mlp.W1"``, ``"lnf.g"`` and ``"W_out"``
  (see :mod:`attention_kit.learn.block`).

:func:`save_params` writes both (and any extra arrays) to one ``.npz``; :func:`load_params` reads
them back for any registered config.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, is_dataclass

import numpy as np

from ..errors import ParameterError

__all__ = ["CONFIGS", "save_params", "load_params"]

#: The config classes a saved file may name, and the module that defines each.
CONFIGS = {
    "TinyLMConfig": "attention_kit.learn.tiny_lm",
    "DecoderConfig": "attention_kit.scale.tiny_decoder",
    "ToyConfig": "attention_kit.learn.toy_tasks",
    "AttnOnlyConfig": "attention_kit.heads.model",
}


def save_params(path, params: dict, config, *, dtype=np.float32, **meta) -> None:
    """Write ``params`` (as ``dtype``, float32 by default), ``config`` and the arrays ``meta`` to one ``.npz``."""
    kind = type(config).__name__
    if not is_dataclass(config) or kind not in CONFIGS:
        raise ParameterError(f"config must be one of the models' configs ({', '.join(CONFIGS)}), "
                             f"got {type(config).__name__}")
    arrays = {f"param/{k}": np.asarray(v, dtype=dtype) for k, v in params.items()}
    arrays |= {"config": np.array(json.dumps({"kind": kind, **asdict(config)}))}
    arrays |= {f"meta/{k}": np.asarray(v) for k, v in meta.items()}
    np.savez_compressed(path, **arrays)


def _config(z) -> object:
    if "config" in z.files:
        fields = json.loads(str(z["config"]))
        kind = fields.pop("kind")
    else:  # files written before the config was one JSON record (the shipped tiny_lm.npz)
        kind = "TinyLMConfig"
        fields = {k[7:]: int(z[k]) for k in z.files if k.startswith("config/")}
    if kind not in CONFIGS:
        raise ParameterError(f"the file holds a {kind}, which is none of {', '.join(CONFIGS)}")
    return getattr(importlib.import_module(CONFIGS[kind]), kind)(**fields)


def load_params(path) -> tuple[dict, object, dict]:
    """Read what :func:`save_params` wrote: ``(params as float64, config, meta)``."""
    with np.load(path) as z:
        params = {k[6:]: z[k].astype(np.float64) for k in z.files if k.startswith("param/")}
        config = _config(z)
        meta = {k[5:]: z[k] for k in z.files if k.startswith("meta/")}
    return params, config, meta
