"""Backend registry: each backend turns two luma-frame streams into ADM scores.

A backend is a module ``admcuda.backends.<name>`` exposing ``score_frames`` with
the :data:`Backend` signature. It returns, per frame, all 18 outputs keyed by
libvmaf's base names (``integer_adm2`` ... ``integer_adm_den_scale3``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

import numpy as np

from admcuda.errors import AdmError

__all__ = ["BACKENDS", "Backend", "get_backend", "select_backend"]

Backend: TypeAlias = Callable[
    [Iterable[np.ndarray], Iterable[np.ndarray], int, int, int, Any],
    list[dict[str, float]],
]

# Preference order for "auto": the first that loads wins.
BACKENDS: tuple[str, ...] = ("cuda", "cpu")


def _load(name: str) -> Backend:
    module_name = f"{__name__}.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise AdmError(f"backend '{name}' is not available yet; use --backend cpu") from None
        raise AdmError(f"backend '{name}' is not available: {exc}") from None
    except ImportError as exc:
        raise AdmError(f"backend '{name}' is not available: {exc}") from None
    return module.score_frames


def select_backend(name: str) -> tuple[str, Backend]:
    """Resolve a backend name to the name actually used and its function.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}
        ``"auto"`` takes the first of :data:`BACKENDS` that loads, so it falls
        back to the CPU quietly when CUDA is unavailable.

    Returns
    -------
    (str, Backend)

    Raises
    ------
    AdmError
        For an unknown name, or a named backend that cannot be loaded.
    """
    if name == "auto":
        for candidate in BACKENDS:
            try:
                return candidate, _load(candidate)
            except AdmError:
                continue
        raise AdmError("no backend could be loaded")
    if name not in BACKENDS:
        raise AdmError(f"unknown backend '{name}'; use auto, {', '.join(BACKENDS)}")
    return name, _load(name)


def get_backend(name: str) -> Backend:
    """Return the ``score_frames`` function of backend ``name``.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}

    Returns
    -------
    Backend
        ``fn(ref_frames, dis_frames, width, height, bitdepth, opts) -> list[dict]``.

    Raises
    ------
    AdmError
        See :func:`select_backend`.
    """
    return select_backend(name)[1]
