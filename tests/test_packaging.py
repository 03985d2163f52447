"""What ``pip install .`` ships: every package of the source tree is named in pyproject.toml.

setuptools installs only the packages listed under ``[tool.setuptools] packages``; a
subpackage left out is missing from the wheel, while the tests (run from the checkout)
still import it from the source tree and pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _source_packages() -> set[str]:
    """Dotted names of the packages found in the checkout, by where setuptools maps them."""
    config = _config()
    roots = {"admcuda": ROOT / "admcuda"}
    roots.update({name: ROOT / folder for name, folder in config["package-dir"].items()})
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            found.add(".".join((name, *rel.parts)))
    return found


def test_every_package_of_the_tree_is_installed():
    listed = set(_config()["packages"])
    missing = sorted(_source_packages() - listed)
    assert not missing, f"pyproject.toml does not install {missing}"
    assert "admcuda.backends.cuda" in listed  # the CUDA backend, which the GPU path needs


def test_installed_packages_exist():
    for name in _config()["packages"]:
        assert name in _source_packages(), f"{name} is listed but has no __init__.py"
