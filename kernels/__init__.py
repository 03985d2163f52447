"""CUDA kernel sources for the ADM stages, shipped as ``admcuda.kernels``."""
