"""GraphCache's policy, with stand-ins for the chain and its graphs (no GPU needed):
capture on the second sighting of a key, replay after, bounded memory, and graphs off
for good once a capture is refused."""

from __future__ import annotations

import pytest

from admcuda.backends.cuda.graphs import GraphCache


class Chain:
    """Counts how a key's chain was queued: launch by launch, captured, replayed."""

    def __init__(self, refuse: bool = False) -> None:
        self.direct = self.captured = self.launched = 0
        self.refuse = refuse

    def run_direct(self) -> None:
        self.direct += 1

    def capture(self):  # noqa: ANN201
        self.captured += 1
        if self.refuse:
            self.direct += 1  # the capture's fallback queues the chain itself
            return None
        chain = self

        class Graph:
            def launch(self) -> None:
                chain.launched += 1

        return Graph()


def run(cache: GraphCache, key, chain: Chain) -> None:  # noqa: ANN001
    cache.run(key, chain.run_direct, chain.capture)


def test_second_sighting_captures_then_replays():
    cache, chain = GraphCache(), Chain()
    run(cache, "a", chain)
    assert (chain.direct, chain.captured, chain.launched) == (1, 0, 0)
    run(cache, "a", chain)
    assert (chain.direct, chain.captured, chain.launched) == (1, 1, 1)  # captured, then run
    for _ in range(3):
        run(cache, "a", chain)
    assert (chain.direct, chain.captured, chain.launched) == (1, 1, 4)
    assert (cache.captures, cache.replays) == (1, 3)


def test_every_run_queues_the_chain_exactly_once():
    cache, chains = GraphCache(size=2), {k: Chain() for k in "abcd"}
    order = "abacbdadcbaa" * 3
    for k in order:
        run(cache, k, chains[k])
    for k, c in chains.items():
        assert c.direct + c.launched == order.count(k), k


def test_keys_seen_once_are_never_captured():
    cache, chain = GraphCache(size=2), Chain()
    for k in range(100):
        run(cache, k, chain)
    assert (chain.direct, chain.captured) == (100, 0)
    assert len(cache._seen) <= 8


def test_least_recently_used_graph_is_dropped():
    cache, chains = GraphCache(size=2), {k: Chain() for k in "abc"}
    for k in "aabbcc":
        run(cache, k, chains[k])
    assert list(cache._graphs) == ["b", "c"]
    run(cache, "a", chains["a"])  # dropped: seen again, then captured again
    run(cache, "a", chains["a"])
    assert chains["a"].captured == 2


def test_refused_capture_turns_graphs_off():
    cache, chain = GraphCache(), Chain(refuse=True)
    for _ in range(4):
        run(cache, "a", chain)
    assert not cache.enabled
    assert (chain.direct, chain.captured, chain.launched) == (4, 1, 0)


def test_size_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        GraphCache(size=0)
