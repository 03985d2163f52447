"""Captured CUDA graphs of a batch's kernel chain, replayed for the batches after.

Queueing one batch's launches from Python takes host time for each distorted input (about
thirty launches, whatever the frame size; ``kernels/NOTES.md``, Design); beside NVDEC's
decoding threads or in a ladder of several inputs that is CPU time taken from them. A chain
captured once into a CUDA graph is queued again with one launch.

A graph holds the device addresses it was captured with. The engine captures the part of
a distorted input's chain that touches only its own buffers (everything after the
scale-0 DWTs, which read the input planes and are launched as they come), so the key
names only what sets those launches' arguments: the frames in the batch, the
accumulators' address and whether the reference's levels come with it. A key is
captured the second time it is seen, so that a run of one batch pays for no capture.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["GraphCache"]


class GraphCache:
    """Graphs by key, least recently used dropped first.

    Parameters
    ----------
    size : int
        Graphs kept; the keys remembered as seen once are bounded by four times that.
    """

    def __init__(self, size: int = 16) -> None:
        if size < 1:
            raise ValueError(f"a graph cache holds at least 1 graph, got {size}")
        self.size = size
        self._graphs: OrderedDict[Hashable, Any] = OrderedDict()
        self._seen: OrderedDict[Hashable, None] = OrderedDict()
        self.enabled = True
        self.captures = 0
        self.replays = 0

    def run(self, key: Hashable, direct: Callable[[], None], capture: Callable[[], Any]) -> None:
        """Queue the chain that ``key`` names.

        ``direct()`` queues it launch by launch. ``capture()`` records it without
        running it and returns an object whose ``launch()`` queues it; or, where it could
        not be captured, queues it launch by launch itself and returns None, which turns
        graphs off for this cache.
        """
        graph = self._graphs.get(key) if self.enabled else None
        if graph is not None:
            self._graphs.move_to_end(key)
            self.replays += 1
            graph.launch()
            return
        if not self.enabled or key not in self._seen:
            if self.enabled:
                self._seen[key] = None
                while len(self._seen) > 4 * self.size:
                    self._seen.popitem(last=False)
            direct()
            return
        del self._seen[key]
        graph = capture()
        if graph is None:
            self.enabled = False
            self._graphs.clear()
            return
        self.captures += 1
        graph.launch()
        self._graphs[key] = graph
        while len(self._graphs) > self.size:
            self._graphs.popitem(last=False)

    def clear(self) -> None:
        self._graphs.clear()
        self._seen.clear()
