"""Notebooks 05-07: one convention for every model's parameters, and save / load for all of them.

A model is two things:

* a **config**, a frozen dataclass of its sizes (:class:`~attention_kit.decoder.tiny_lm.TinyLMConfig`,
  :class:`~attention_kit.decoder.tiny_decoder.DecoderConfig`, ...);
* its **parameters**, a flat dict ``{name: ndarray}``, what the optimisers update in place and what
  a gradient dict mirrors name for name. A decoder's names are ``"E"`` (embeddings),
  ``"l{l}.ln1.g"``, ``"l{l}.attn.W_q"``, ..., ``"l{l}.mlp.W1"``, ``"lnf.g"`` and ``"W_out"``
  (see :mod:`attention_kit.decoder.block`).

:func:`save_params` writes both (and any extra arrays) to one ``.npz``, the config by its class's
name; :func:`load_params` reads them back into the config class its caller names, so this module
knows none of the models (they are built above it, in ``learn``, ``decoder`` and ``heads``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass

import numpy as np

from ..errors import ParameterError
from ..i18n import _

__all__ = ["save_params", "load_params"]


def save_params(path, params: dict, config, *, dtype=np.float32, **meta) -> None:
    """Write ``params`` (as ``dtype``, float32 by default), ``config`` and the arrays ``meta`` to one ``.npz``."""
    kind = type(config).__name__
    if not is_dataclass(config) or isinstance(config, type):
        raise ParameterError(_("config must be a model's config (a dataclass such as TinyLMConfig), "
                             "got {kind}").format(kind=type(config).__name__))
    arrays = {f"param/{k}": np.asarray(v, dtype=dtype) for k, v in params.items()}
    arrays |= {"config": np.array(json.dumps({"kind": kind, **asdict(config)}))}
    arrays |= {f"meta/{k}": np.asarray(v) for k, v in meta.items()}
    np.savez_compressed(path, **arrays)


def _config(z, config_type: type) -> object:
    if "config" in z.files:
        fields = json.loads(str(z["config"]))
        kind = fields.pop("kind")
    else:  # files written before the config was one JSON record (the shipped tiny_lm.npz)
        kind = "TinyLMConfig"
        fields = {k[7:]: int(z[k]) for k in z.files if k.startswith("config/")}
    if kind != config_type.__name__:
        raise ParameterError(_("the file holds a {kind}, not a {wanted}").format(kind=kind, wanted=config_type.__name__))
    return config_type(**fields)


def load_params(path, config_type: type) -> tuple[dict, object, dict]:
    """Read what :func:`save_params` wrote: ``(params as float64, config, meta)``.

    ``config_type`` is the class of the config the file holds (``TinyLMConfig``, ``DecoderConfig``,
    ``ToyConfig``, ``AttnOnlyConfig``, ...); a file that holds another raises ``ParameterError``.
    """
    if not (isinstance(config_type, type) and is_dataclass(config_type)):
        raise ParameterError(_("config_type must be a model's config class, e.g. TinyLMConfig, not {config_type!r}").format(config_type=config_type))
    with np.load(path) as z:
        params = {k[6:]: z[k].astype(np.float64) for k in z.files if k.startswith("param/")}
        config = _config(z, config_type)
        meta = {k[5:]: z[k] for k in z.files if k.startswith("meta/")}
    return params, config, meta
