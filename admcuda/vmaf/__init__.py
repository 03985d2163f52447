"""VMAF as libvmaf 3.2.0 computes it: ADM, VIF and motion beside libvmaf's models.

:mod:`.plan` turns libvmaf's command line (``--model``, ``--feature``) into the extractors
to run and the names and order libvmaf prints; :mod:`.compute` runs a plan on the CPU with
the bit-exact NumPy reference, frame by frame (:func:`score_pair`), then over the clip
(:func:`finish_clip`, :func:`pooled`).

Where a feature plugs in: admcuda computes four of libvmaf's features, ADM, VIF, motion
and PSNR (:mod:`.psnr`: on the host from every plane read, whatever the backend), and
each has

- its integer reference stages in ``reference/`` (``reference/adm.py`` and the stage
  modules it calls, ``reference/vif.py``, ``reference/motion.py``), one function per
  libvmaf stage;
- its option table and output names (ADM's in :mod:`admcuda.options`, VIF's and motion's
  extractor tables in :mod:`admcuda.model.features`);
- its place in a run's plan (:mod:`.plan`), which registers extractors as libvmaf does,
  computed on the CPU backend by :mod:`.compute`.

ADM also runs on the GPU: its CUDA kernels in ``kernels/`` (``adm_*.cu``, the same stage
names), compiled only through :mod:`admcuda.backends.cuda.kernels`, its launchers and
engine in ``admcuda/backends/cuda/`` and its host-side finish in
:mod:`admcuda.backends.cuda.finish`. VIF and motion kernels are to follow the same
pattern (``kernels/vif_*.cu``, ``kernels/motion_*.cu``). libvmaf's SVM models over the
features are in ``admcuda/model/``.

>>> from admcuda.vmaf import build_plan
>>> plan = build_plan(["version=vmaf_v0.6.1", "version=vmaf_4k_v0.6.1:name=vmaf_4k"])
>>> [ex.name for ex in plan.extractors], plan.model_outputs
(['adm', 'motion', 'vif'], ('vmaf', 'vmaf_4k'))
"""

from admcuda.vmaf.compute import aggregate_metrics, finish_clip, pooled, score_clip, score_pair
from admcuda.vmaf.plan import (
    FEATURE_NAMES,
    Extractor,
    FeaturePlan,
    build_plan,
    parse_feature_arg,
)

__all__ = [
    "FEATURE_NAMES",
    "Extractor",
    "FeaturePlan",
    "aggregate_metrics",
    "build_plan",
    "finish_clip",
    "parse_feature_arg",
    "pooled",
    "score_clip",
    "score_pair",
]
