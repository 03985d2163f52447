"""A small example pair shipped with admcuda, for ``admcuda score --example``.

The two files are QCIF (176x144), 4:2:0, 8-bit, 3 frames, made by
``python -m admcuda.data.make_example`` from scikit-image's ``camera`` picture.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EXAMPLE", "ExamplePair", "example_paths"]


@dataclass(frozen=True)
class ExamplePair:
    """File names and geometry of the shipped example pair."""

    ref: str
    dis: str
    width: int
    height: int
    pixel_format: str
    bitdepth: int
    frames: int


EXAMPLE = ExamplePair(
    ref="example_ref_176x144_3f.yuv",
    dis="example_dis_176x144_3f.yuv",
    width=176,
    height=144,
    pixel_format="420",
    bitdepth=8,
    frames=3,
)


@contextlib.contextmanager
def example_paths() -> Iterator[tuple[Path, Path]]:
    """Yield filesystem paths of the example reference and distorted files.

    Yields
    ------
    (pathlib.Path, pathlib.Path)
        Valid inside the ``with`` block (the package may live in a zip file).
    """
    here = Path(__file__).parent
    if (here / EXAMPLE.ref).is_file() and (here / EXAMPLE.dis).is_file():
        # installed as plain files: no need for importlib.resources (and its zipfile,
        # tempfile, compression imports) to find them
        yield here / EXAMPLE.ref, here / EXAMPLE.dis
        return
    from importlib import resources

    root = resources.files(__name__)
    with (
        resources.as_file(root / EXAMPLE.ref) as ref,
        resources.as_file(root / EXAMPLE.dis) as dis,
    ):
        yield Path(ref), Path(dis)
