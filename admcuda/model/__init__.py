"""libvmaf's VMAF models: load, predict and pool exactly as libvmaf 3.2.0 does.

>>> from admcuda.model import load_model, pool
>>> model = load_model("vmaf_v0.6.1neg")
>>> for f in model.features[:2]:
...     print(f.extractor, f.options, f.collector_name)
adm {'adm_enhn_gain_limit': 1.0} integer_adm2_egl_1
motion {} VMAF_integer_feature_motion2_score

``model.predict({collector_name: value, ...})`` gives one frame's score, bit for bit
libvmaf's; ``pool(scores, "mean")`` pools them as libvmaf does. A bootstrap model
collection (``vmaf_b_v0.6.3``) loads as its model ``0`` with its members in
``model.bootstrap``; ``model.predict_collection(...)`` gives the members' scores and the
bagging score, standard deviation and 95% interval libvmaf files beside it. The float
models (``vmaf_float_v0.6.1``, ...) read libvmaf's float_adm, float_vif and float_motion.
"""

from admcuda.model.features import (
    ADM,
    CAMBI,
    COMPUTED_EXTRACTORS,
    FLOAT_ADM,
    FLOAT_MOTION,
    FLOAT_VIF,
    MOTION,
    OUTPUT_ALIASES,
    SPEED_CHROMA,
    VIF,
    Extractor,
    ModelError,
    Option,
    output_name,
)
from admcuda.model.loader import (
    BUILTIN_VERSIONS,
    FLOAT_VERSIONS,
    V1016_VERSIONS,
    Bootstrap,
    Model,
    ModelFeature,
    ModelSpec,
    load_model,
    model_arg,
    parse_model_arg,
)
from admcuda.model.pool import POOL_METHODS, pool
from admcuda.model.predict import ChromaCorrection, ScoreTransform
from admcuda.model.svm import SvmModel, libm_exp

__all__ = [
    "ADM",
    "BUILTIN_VERSIONS",
    "CAMBI",
    "COMPUTED_EXTRACTORS",
    "FLOAT_ADM",
    "FLOAT_MOTION",
    "FLOAT_VERSIONS",
    "FLOAT_VIF",
    "MOTION",
    "OUTPUT_ALIASES",
    "POOL_METHODS",
    "SPEED_CHROMA",
    "V1016_VERSIONS",
    "VIF",
    "Bootstrap",
    "ChromaCorrection",
    "Extractor",
    "Model",
    "ModelError",
    "ModelFeature",
    "ModelSpec",
    "Option",
    "ScoreTransform",
    "SvmModel",
    "libm_exp",
    "load_model",
    "model_arg",
    "output_name",
    "parse_model_arg",
    "pool",
]
