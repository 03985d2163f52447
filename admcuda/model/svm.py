"""libsvm's regression models as libvmaf 3.2.0 reads and evaluates them (src/svm.cpp).

A VMAF model carries a libsvm model as text. Prediction is libsvm's
``svm_predict_values`` for nu-SVR and epsilon-SVR with the RBF kernel of
``Kernel::k_function``: for each support vector in file order, the squared distance is
summed in double over the merged index lists, ``exp(-gamma * sum)`` comes from the C
library's ``exp``, and ``coef * k`` is added to a running double sum, from which ``rho`` is
subtracted. Every step here is that sequence of IEEE double operations, in that order;
NumPy's own ``exp`` and its pairwise sums differ from it in the last bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from admcuda.model.features import ModelError

__all__ = ["SvmModel", "libm_exp", "parse_libsvm"]

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_INT = re.compile(r"[+-]?\d+")
_SVR_TYPES = ("epsilon_svr", "nu_svr")
_SVM_TYPES = ("c_svc", "nu_svc", "one_class", *_SVR_TYPES)
_KERNEL_TYPES = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
# The header lines libvmaf's parser knows; it refuses any other.
_HEADER_KEYS = (
    "svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho",
    "label", "probA", "probB", "nr_sv",
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def _exp() -> Callable[[float], float]:
    path = ctypes.util.find_library("m")
    try:
        fn = ctypes.CDLL(path).exp
    except (OSError, AttributeError):
        raise ModelError("cannot load the C math library's exp, which libvmaf uses") from None
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_double]
    return fn


def libm_exp(x: float) -> float:
    """The C math library's ``exp(x)`` in double, the function libsvm calls."""
    return _exp()(x)


# Python's math.exp is a thin wrapper over the same C library's exp (CPython's mathmodule
# calls it directly), at a quarter of a ctypes call's cost; tests/test_model.py checks the
# two agree on this machine.
_c_exp = math.exp


# One step of the RBF distance over the merged index lists: (feature column or -1,
# support-vector value or None). Column and value: (x - v)^2; column alone: x^2;
# value alone: v^2.
_Step = tuple[int, "float | None"]


@dataclass(frozen=True)
class SvmModel:
    """A parsed libsvm regression model.

    Attributes
    ----------
    svm_type : str
        ``nu_svr`` or ``epsilon_svr``.
    gamma, rho : float
        RBF kernel width and the decision offset.
    sv_coef : tuple of float
        One coefficient per support vector, in file order.
    support_vectors : tuple of tuple of (int, float)
        Each support vector's (index, value) nodes, indices ascending from 1.
    """

    svm_type: str
    gamma: float
    rho: float
    sv_coef: tuple[float, ...]
    support_vectors: tuple[tuple[tuple[int, float], ...], ...]
    _plans: dict[int, tuple[tuple[_Step, ...], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def predict(self, x: Sequence[float]) -> float:
        """libsvm's ``svm_predict`` for one input whose nodes are indices 1..len(x)."""
        exp = _c_exp
        neg_gamma = -self.gamma
        total = 0.0
        for coef, steps in zip(self.sv_coef, self._plan(len(x)), strict=True):
            dist = 0.0
            for col, value in steps:
                if value is None:
                    dist += x[col] * x[col]
                elif col < 0:
                    dist += value * value
                else:
                    d = x[col] - value
                    dist += d * d
            total += coef * exp(neg_gamma * dist)
        return total - self.rho

    def predict_many(self, x: np.ndarray) -> np.ndarray:
        """:meth:`predict` for each row of ``x`` (frames x features), with the same numbers.

        Element-wise NumPy operations round each element as the scalar C operation does,
        so the sums run in the same order for all rows at once; only ``exp`` goes element
        by element, through the C library.
        """
        x = np.asarray(x, dtype=np.float64)
        exp = _c_exp
        neg_gamma = -self.gamma
        total = np.zeros(x.shape[0])
        for coef, steps in zip(self.sv_coef, self._plan(x.shape[1]), strict=True):
            dist = np.zeros(x.shape[0])
            for col, value in steps:
                if value is None:
                    dist += x[:, col] * x[:, col]
                elif col < 0:
                    dist += value * value
                else:
                    d = x[:, col] - value
                    dist += d * d
            arg = neg_gamma * dist
            k = np.array([exp(a) for a in arg.tolist()], dtype=np.float64)
            total += coef * k
        return total - self.rho

    def _plan(self, n_features: int) -> tuple[tuple[_Step, ...], ...]:
        """The merge of nodes 1..n_features with each support vector, as libsvm walks it."""
        plan = self._plans.get(n_features)
        if plan is None:
            plan = tuple(_merge(n_features, sv) for sv in self.support_vectors)
            self._plans[n_features] = plan
        return plan


def _merge(n_features: int, sv: tuple[tuple[int, float], ...]) -> tuple[_Step, ...]:
    steps: list[_Step] = []
    i, j = 1, 0
    while i <= n_features and j < len(sv):
        index, value = sv[j]
        if i == index:
            steps.append((i - 1, value))
            i += 1
            j += 1
        elif i > index:
            steps.append((-1, value))
            j += 1
        else:
            steps.append((i - 1, None))
            i += 1
    steps.extend((col - 1, None) for col in range(i, n_features + 1))
    steps.extend((-1, value) for _, value in sv[j:])
    return tuple(steps)


def _number(token: str, what: str) -> float:
    if not _NUMBER.fullmatch(token):
        raise ModelError(f"libsvm model: {what} is not a number: '{token}'")
    return float(token)


def _integer(token: str, what: str) -> int:
    if not _INT.fullmatch(token):
        raise ModelError(f"libsvm model: {what} is not an integer: '{token}'")
    return int(token)


def parse_libsvm(text: str) -> SvmModel:
    """Parse the libsvm model text of a VMAF model (its ``model_dict.model``).

    Raises
    ------
    ModelError
        On text libvmaf's parser rejects, and on a model admcuda does not evaluate: one
        that is not a nu-SVR or epsilon-SVR with an RBF kernel.
    """
    lines = text.split("\n")
    try:
        sv_at = next(n for n, line in enumerate(lines) if line.strip() == "SV")
    except StopIteration:
        raise ModelError("libsvm model: no 'SV' line") from None
    header: dict[str, list[str]] = {}
    for line in lines[:sv_at]:
        tokens = line.split()
        if not tokens:
            continue
        key = tokens[0]
        if key not in _HEADER_KEYS:
            raise ModelError(f"libsvm model: unknown header line '{line.strip()}'")
        header[key] = tokens[1:]
    for key in ("svm_type", "kernel_type", "gamma", "nr_class", "total_sv", "rho"):
        if len(header.get(key, ())) < 1:
            raise ModelError(f"libsvm model: no {key}")
    svm_type = header["svm_type"][0]
    if svm_type not in _SVM_TYPES:
        raise ModelError(f"libsvm model: unknown svm_type '{svm_type}'")
    if svm_type not in _SVR_TYPES:
        raise ModelError(
            f"libsvm model: svm_type {svm_type} is not supported (nu_svr and epsilon_svr are)"
        )
    kernel = header["kernel_type"][0]
    if kernel not in _KERNEL_TYPES:
        raise ModelError(f"libsvm model: unknown kernel_type '{kernel}'")
    if kernel != "rbf":
        raise ModelError(f"libsvm model: kernel_type {kernel} is not supported (rbf is)")
    if _integer(header["nr_class"][0], "nr_class") != 2:
        raise ModelError("libsvm model: a regression model has nr_class 2")
    if len(header["rho"]) != 1:
        raise ModelError("libsvm model: a regression model has one rho")
    gamma = _number(header["gamma"][0], "gamma")
    rho = _number(header["rho"][0], "rho")
    total_sv = _integer(header["total_sv"][0], "total_sv")
    body = [line for line in lines[sv_at + 1 :] if line.strip()]
    if len(body) != total_sv:
        raise ModelError(
            f"libsvm model: total_sv is {total_sv} but {len(body)} support vectors follow"
        )
    coefs: list[float] = []
    svs: list[tuple[tuple[int, float], ...]] = []
    for n, line in enumerate(body):
        tokens = line.split()
        coefs.append(_number(tokens[0], f"coefficient of support vector {n + 1}"))
        nodes: list[tuple[int, float]] = []
        for token in tokens[1:]:
            index, sep, value = token.partition(":")
            what = f"node '{token}' of support vector {n + 1}"
            if not sep:
                raise ModelError(f"libsvm model: {what} is not INDEX:VALUE")
            node = (_integer(index, what), _number(value, what))
            if node[0] < 1 or (nodes and node[0] <= nodes[-1][0]):
                raise ModelError(f"libsvm model: {what}: indices must ascend from 1")
            nodes.append(node)
        svs.append(tuple(nodes))
    return SvmModel(svm_type, gamma, rho, tuple(coefs), tuple(svs))
