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
import sys
from typing import Any

import numpy as np

from admcuda import cuda_start

__all__ = [
    "HostBlock",
    "can_page_lock_early",
    "early_block",
    "keep_blocks",
    "pinned_array",
    "registered",
]

_ALIGN = 2 << 20  # a transparent huge page

# Registered blocks released by one run and kept for the next, where keep_blocks() asked
# for it (admcuda serve): registering a 1080p run's slots took about 0.1 to 0.2 s of its
# start. [limit in bytes, the blocks]
_kept: list[Any] = [0, []]

# The address ranges of the registered blocks alive, by block: what the engines upload
# from without a staging copy, whoever made the block.
_registered: dict[int, tuple[int, int]] = {}


class HostBlock:
    """``nbytes`` of page-locked host memory; :meth:`array` views it. Registered memory is
    unregistered by :meth:`release` (after the device is idle) or when the block is
    garbage collected."""

    def __init__(self, nbytes: int, *, driver: bool = False) -> None:
        """``driver``: registered through :func:`admcuda.cuda_start.register_host`, without
        CuPy (before it is imported); then a failure raises ``OSError``."""
        self.nbytes = max(int(nbytes), 1)
        self._ptr: int | None = None
        self._map: mmap.mmap | None = None
        self._pinned: Any = None
        self._driver = driver
        if driver:
            self._cp = None
            if not self._map_and_register(cuda_start.register_host):
                raise OSError("the driver did not page-lock the memory")
            return
        import cupy as cp

        self._cp = cp
        try:
            registered = self._map_and_register(
                lambda ptr, size: cp.cuda.runtime.hostRegister(ptr, size, 0) is None
            )
        except Exception:  # noqa: BLE001 - any failure: CUDA's own allocation instead
            registered = False
        if not registered:
            self._map = None
            self._pinned = cp.cuda.alloc_pinned_memory(self.nbytes)

    def _map_and_register(self, register: Any) -> bool:
        self._map = mmap.mmap(-1, self.nbytes + _ALIGN, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        with contextlib.suppress(AttributeError, OSError):
            self._map.madvise(mmap.MADV_HUGEPAGE)
        whole = np.frombuffer(self._map, np.uint8)
        self._offset = -whole.ctypes.data % _ALIGN
        ptr = whole.ctypes.data + self._offset
        del whole
        if not register(ptr, -(-self.nbytes // mmap.PAGESIZE) * mmap.PAGESIZE):
            return False
        self._ptr = ptr
        _registered[id(self)] = (ptr, ptr + self.nbytes)
        return True

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
        """Unregister the memory (once), or keep it registered for a later
        :func:`pinned_array` (:func:`keep_blocks`). Arrays over it stay readable; call it
        only when no copy from or to it is in flight and the arrays are no longer used."""
        limit, kept = _kept
        if self._ptr is not None and self not in kept:
            if sum(b.nbytes for b in kept) + self.nbytes <= limit:
                kept.append(self)
                return
        self._unregister()

    def _unregister(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            _registered.pop(id(self), None)
            with contextlib.suppress(Exception):
                if self._driver:
                    cuda_start.unregister_host(ptr)
                else:
                    self._cp.cuda.runtime.hostUnregister(ptr)

    def __del__(self) -> None:
        self._unregister()


def registered(arr: np.ndarray) -> bool:
    """Whether ``arr`` lies in a registered block that is still registered."""
    lo = arr.ctypes.data
    hi = lo + arr.nbytes
    return any(a <= lo and hi <= b for a, b in list(_registered.values()))


def early_block(nbytes: int) -> tuple[np.ndarray, HostBlock] | None:
    """``nbytes`` of page-locked memory (a flat uint8 array and its block) on a thread
    that may run while CuPy imports: through CuPy where it is loaded already, else
    through the driver once the command line's early start made the context
    (:mod:`admcuda.cuda_start`); None where neither can page-lock it."""
    if "cupy" in sys.modules:
        return pinned_array((nbytes,), np.uint8)
    if not cuda_start.started():
        return None
    try:
        block = HostBlock(nbytes, driver=True)
    except OSError:
        return None
    return block.array((nbytes,), np.uint8), block


def can_page_lock_early() -> bool:
    """Whether :func:`early_block` may page-lock (CuPy loaded, or the early start begun)."""
    return "cupy" in sys.modules or cuda_start.started()


def keep_blocks(limit: int) -> None:
    """Keep up to ``limit`` bytes of released registered blocks for later arrays (for a
    process that scores one run after another); 0 unregisters those kept and stops."""
    _kept[0] = max(0, int(limit))
    kept = _kept[1]
    while kept and sum(b.nbytes for b in kept) > _kept[0]:
        kept.pop()._unregister()


def pinned_array(shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, HostBlock]:
    """A page-locked NumPy array and the block that holds it (keep the block alive): a
    kept block that fits (at most twice the size), else a new one."""
    dtype = np.dtype(dtype)
    nbytes = max(int(np.prod(shape)) * dtype.itemsize, 1)
    kept = _kept[1]
    fits = [b for b in kept if nbytes <= b.nbytes <= 2 * nbytes + _ALIGN]
    if fits:
        block = min(fits, key=lambda b: b.nbytes)
        kept.remove(block)
    else:
        block = HostBlock(nbytes)
    return block.array(shape, dtype), block
