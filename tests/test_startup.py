"""Start-up: a run imports only what it needs. A CPU run of ADM loads no CUDA, no decoder
for encoded video, no Dask, no plotting and no VIF or motion code; the modules are read
from a fresh interpreter's ``sys.modules`` once the run is over."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

# Runs the command line in this interpreter, then lists every module it loaded.
_WRAPPER = """
import sys
from admcuda.cli.main import main
status = main(sys.argv[1:])
print("--modules--")
print("\\n".join(sorted(sys.modules)))
raise SystemExit(status)
"""

# Modules (and their submodules) that an ADM run on the CPU has no use for.
NOT_FOR_A_CPU_RUN = (
    "cupy",
    "cupyx",
    "admcuda.backends.cuda",
    "admcuda.io.nvdec",
    "dask",
    "distributed",
    "admcuda.batch",
    "matplotlib",
    "admcuda.report.plot",
    "admcuda.reference.vif",
    "admcuda.reference.motion",
    "concurrent.futures.process",
)


def _modules_after(*argv: str) -> tuple[str, list[str]]:
    run = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    output, _, modules = run.stdout.partition("--modules--\n")
    return output, modules.split()


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def test_cpu_example_loads_no_cuda_video_dask_or_plotting() -> None:
    output, modules = _modules_after("score", "--example", "--backend", "cpu")
    assert "integer_adm2" in output
    # the listing is the run's own, and the check finds a package's submodules
    assert "admcuda.reference.adm" in _loaded(modules, ("admcuda.reference",))
    assert _loaded(modules, NOT_FOR_A_CPU_RUN) == []
