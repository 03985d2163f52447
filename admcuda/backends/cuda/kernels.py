"""The kernel loader under its former name: :mod:`admcuda.kernel_loader` itself (the one
module object, so that its caches and anything set on it are shared), for code that
imports ``admcuda.backends.cuda.kernels``."""

import sys

from admcuda import kernel_loader

sys.modules[__name__] = kernel_loader
