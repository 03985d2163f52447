"""VMAF as libvmaf 3.2.0 computes it: ADM, VIF and motion beside libvmaf's models.

:mod:`.plan` turns libvmaf's command line (``--model``, ``--feature``) into the extractors
to run and the names and order libvmaf prints; :mod:`.compute` runs a plan on the CPU with
the bit-exact NumPy reference, frame by frame (:func:`score_pair`), then over the clip
(:func:`finish_clip`, :func:`pooled`).

>>> from admcuda.vmaf import build_plan
>>> plan = build_plan(["version=vmaf_v0.6.1", "version=vmaf_4k_v0.6.1:name=vmaf_4k"])
>>> [ex.name for ex in plan.extractors], plan.model_outputs
(['adm', 'motion', 'vif'], ('vmaf', 'vmaf_4k'))
"""

from admcuda.vmaf.compute import finish_clip, pooled, score_clip, score_pair
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
    "build_plan",
    "finish_clip",
    "parse_feature_arg",
    "pooled",
    "score_clip",
    "score_pair",
]
