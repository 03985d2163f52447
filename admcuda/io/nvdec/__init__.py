"""Encoded video decoded on the GPU's NVDEC through PyNvVideoCodec: ``reader`` (the
binding, the H.264 parameter sets, the session planner and the reader) and ``worker``
(decoding in worker processes)."""
