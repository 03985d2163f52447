"""Page-locked host memory for the pipeline's slots (the engine's staging buffers and the
bench's copy-only ceiling too; the small accumulators keep CuPy's allocator).

A block is an anonymous memory map, advised to use transparent huge pages, registered
with CUDA (``cudaHostRegister``); uploads from it are asynchronous DMA, as from
``cudaHostAlloc`` memory. On an H200 an untouched advised map registered faster than
CuPy's ``alloc_pinned_memory`` allocated a block of the same size. Page-locking the slots
is on the way to the first batch, and on the reader's thread for the first three, so it
is part of every run's start-up.

Where the map or the registration fails (no huge pages is not a failure: the map then
uses small pages), the block comes from CuPy's ``alloc_pinned_memory`` instead.
"""

from __future__ import annotations

import contextlib
import mmap
from typing import Any

import numpy as np

__all__ = ["HostBlock", "pinned_array"]

_ALIGN = 2 << 20  # a transparent huge page


class HostBlock:
    """``nbytes`` of page-locked host memory; :meth:`array` views it. Registered memory is
    unregistered by :meth:`release` (after the device is idle) or when the block is
    garbage collected."""

    def __init__(self, nbytes: int) -> None:
        import cupy as cp

        self._cp = cp
        self.nbytes = max(int(nbytes), 1)
        self._ptr: int | None = None
        self._map: mmap.mmap | None = None
        self._pinned: Any = None
        try:
            self._map = mmap.mmap(
                -1, self.nbytes + _ALIGN, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
            )
            with contextlib.suppress(AttributeError, OSError):
                self._map.madvise(mmap.MADV_HUGEPAGE)
            whole = np.frombuffer(self._map, np.uint8)
            self._offset = -whole.ctypes.data % _ALIGN
            ptr = whole.ctypes.data + self._offset
            del whole
            cp.cuda.runtime.hostRegister(ptr, -(-self.nbytes // mmap.PAGESIZE) * mmap.PAGESIZE, 0)
            self._ptr = ptr
        except Exception:  # noqa: BLE001 - any failure: CUDA's own allocation instead
            self._map = None
            self._pinned = cp.cuda.alloc_pinned_memory(self.nbytes)

    def array(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A NumPy array of ``shape`` over the start of the block."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        if count * dtype.itemsize > self.nbytes:
            raise ValueError(f"{shape} {dtype} does not fit in a block of {self.nbytes} bytes")
        if self._map is not None:
            arr = np.frombuffer(self._map, dtype, count=count, offset=self._offset)
        else:
            arr = np.frombuffer(self._pinned, dtype, count=count)
        return arr.reshape(shape)

    def release(self) -> None:
        """Unregister the memory (once). Arrays over it stay readable, no longer locked;
        call it only when no copy from or to it is in flight."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            with contextlib.suppress(Exception):
                self._cp.cuda.runtime.hostUnregister(ptr)

    def __del__(self) -> None:
        self.release()


def pinned_array(shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, HostBlock]:
    """A page-locked NumPy array and the block that holds it (keep the block alive)."""
    dtype = np.dtype(dtype)
    block = HostBlock(int(np.prod(shape)) * dtype.itemsize)
    return block.array(shape, dtype), block
