"""Captured CUDA graphs of a batch's kernel chain, replayed when the same batch comes again.

Queueing one batch's launches from Python costs the host about 1.3 ms (traced on the H200
in session 14), whatever the frame size: at 576x324 that is as long as the GPU takes for a
512-frame batch. A chain captured once into a CUDA graph is queued again with one launch.

A graph holds the device addresses it was captured with, so it is kept under a key that
names them (the inputs' planes, the accumulators) with everything else that sets the
launches' arguments (frames, inputs). Inputs at addresses that come back — the engine's
own buffers, a pipeline's ring of device slots, a caller's arrays scored again — find
their graph; addresses seen once never pay for a capture, because a key is captured only
the second time it is seen.
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
