"""Where a feature plugs in.

ADM is the one feature today. Each feature has:

- its integer reference stages in ``reference/`` (``reference/adm.py`` and the stage
  modules it calls), one function per libvmaf stage;
- its CUDA kernels in ``kernels/`` (``adm_*.cu``, the same stage names), compiled only
  through :mod:`admcuda.backends.cuda.kernels`;
- its CUDA launchers and engine in ``admcuda/backends/cuda/`` and its host-side finish
  in :mod:`admcuda.backends.cuda.finish`;
- its option table and output names in :mod:`admcuda.options`.

VIF and motion follow the same pattern (``reference/vif.py``, ``reference/motion.py``,
``kernels/vif_*.cu``, ``kernels/motion_*.cu``); libvmaf's SVM models over the features go
in ``admcuda/model/``.
"""
