"""Where a feature plugs in.

admcuda computes three of libvmaf's features: ADM, VIF and motion. Each has:

- its integer reference stages in ``reference/`` (``reference/adm.py`` and the stage
  modules it calls, ``reference/vif.py``, ``reference/motion.py``), one function per
  libvmaf stage;
- its option table and output names (ADM's in :mod:`admcuda.options`, VIF's and motion's
  extractor tables in :mod:`admcuda.model.features`);
- its place in a run's :mod:`admcuda.vmaf` plan, which registers extractors as libvmaf
  does and computes them on the CPU backend.

ADM also runs on the GPU: its CUDA kernels in ``kernels/`` (``adm_*.cu``, the same stage
names), compiled only through :mod:`admcuda.backends.cuda.kernels`, its launchers and
engine in ``admcuda/backends/cuda/`` and its host-side finish in
:mod:`admcuda.backends.cuda.finish`. VIF and motion kernels are to follow the same
pattern (``kernels/vif_*.cu``, ``kernels/motion_*.cu``). libvmaf's SVM models over the
features are in ``admcuda/model/``.
"""
