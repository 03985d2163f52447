"""The package's layout rules: no import circle between admcuda's modules, no module
importing another's private names, and a top-level namespace that hands public names on
only."""

from __future__ import annotations

import ast

from conftest import ROOT

import admcuda

PACKAGE = ROOT / "admcuda"


def _module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, tree: ast.Module, known: set[str]):
    """(imported module, names taken from it) for every import in ``tree``, at any depth."""
    package = (
        name
        if (PACKAGE / name.replace("admcuda.", "", 1).replace(".", "/")).is_dir()
        else name.rsplit(".", 1)[0]
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    yield full, []
                else:
                    yield base, [alias.name]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, tree in modules.items():
        for target, _ in _imports(name, tree, known):
            if target in known and target != name:
                graph[name].add(target)
    return graph


def test_no_import_circles():
    graph = _graph()
    # a package's __init__ that only hands names on is skipped as an edge target: importing
    # admcuda.x runs admcuda/__init__ first whatever it holds
    for node in graph:
        graph[node].discard("admcuda")
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not circles, circles


def test_no_private_names_across_modules():
    modules = _modules()
    known = set(modules)
    found = []
    for name, tree in modules.items():
        for target, names in _imports(name, tree, known):
            if not target.startswith("admcuda") or target == name:
                continue
            last = target.rsplit(".", 1)[-1]
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if last.startswith("_") and not last.startswith("__"):
                private.append(target)
            if private:
                found.append(f"{name} imports {', '.join(private)} from {target}")
    assert not found, found


def test_top_level_hands_public_names_on():
    text = (PACKAGE / "__init__.py").read_text()
    assert len(text.splitlines()) <= 150
    assert sorted(dir(admcuda)) == sorted(admcuda.__all__)
    for name in admcuda.__all__:
        assert getattr(admcuda, name) is not None, name
    for name in (
        "AdmExtractor",
        "AdmResult",
        "VmafExtractor",
        "score",
        "score_files",
        "score_ladder",
    ):
        assert name in dir(admcuda)
        assert name in admcuda.__doc__
    for name in ("np", "os", "threading", "Any"):
        assert name not in dir(admcuda)


def test_only_the_kernel_loader_compiles_cuda():
    """CuPy's RawModule is touched in one module; every .cu file is under kernels/."""
    users = [
        p.relative_to(ROOT).as_posix()
        for p in PACKAGE.rglob("*.py")
        if "RawModule(" in p.read_text() or "RawKernel(" in p.read_text()
    ]
    assert users == ["admcuda/kernel_loader.py"]
    assert not list(PACKAGE.rglob("*.cu")) and "__global__" not in "".join(
        p.read_text() for p in PACKAGE.rglob("*.py")
    )


def test_nvdec_luma_copy_source_comes_from_kernels():
    from admcuda import kernel_loader as kernels

    text = kernels.plain_source("nvdec_luma", (("P016_SHIFT", 6), ("P016_LOW", 63)))
    assert text.startswith("#define P016_SHIFT 6\n#define P016_LOW 63\n")
    for name in ("admcuda_luma_nv12", "admcuda_luma_p016"):
        assert f'extern "C" __global__ void {name}(' in text


# What the engines and the input layer sit below: the feature plan, the pipeline and
# everything that drives them. An engine takes the plan as data (and score_pair as a
# callable); frames come in through admcuda.io, which knows nothing of engines.
_ABOVE_ENGINES = (
    "admcuda.api", "admcuda.batch", "admcuda.cli", "admcuda.extractor", "admcuda.ladder",
    "admcuda.libvmaf", "admcuda.model", "admcuda.pipeline", "admcuda.report",
    "admcuda.sources", "admcuda.vmaf",
)  # fmt: skip
# The one arrow still allowed up: the engine factory (admcuda.backends.engine_for) sizes
# batches with the pipeline's host-memory planning.
_ALLOWED_UP = {
    ("admcuda.backends", "admcuda.pipeline"): {
        "CPU_HOST_MEMORY", "CPU_WORK_BYTES_PER_PIXEL", "DEFAULT_HOST_MEMORY", "available_memory",
        "check_frame_memory", "plan_batch",
    },
}  # fmt: skip


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _arrows(sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    """Imports, at any depth (inside functions too), from modules under ``sources`` to
    modules under ``targets``, less :data:`_ALLOWED_UP`."""
    modules = _modules()
    known = set(modules)
    found = []
    for name, tree in modules.items():
        if not _under(name, sources):
            continue
        for target, names in _imports(name, tree, known):
            if not _under(target, targets):
                continue
            allowed = _ALLOWED_UP.get((name, target))
            if allowed is not None and names and set(names) <= allowed:
                continue
            found.append(f"{name} imports {target} {names or ''}".rstrip())
    return found


def test_engines_and_inputs_import_nothing_above_them():
    assert not _arrows(("admcuda.backends", "admcuda.io"), _ABOVE_ENGINES)


def test_inputs_import_no_engine():
    """NVDEC's luma copy compiles through the kernel loader, not the CUDA backend."""
    assert not _arrows(("admcuda.io",), ("admcuda.backends", "admcuda.compiled"))


def test_the_kernel_loader_imports_the_reference_alone():
    modules = _modules()
    tree = modules["admcuda.kernel_loader"]
    targets = {t for t, _ in _imports("admcuda.kernel_loader", tree, set(modules))}
    assert {t for t in targets if t.startswith("admcuda")} <= {
        "admcuda.reference", "admcuda.reference.constants", "admcuda.reference.decouple",
        "admcuda.reference.vif_constants", "admcuda.reference.motion", "admcuda.reference.vif",
    }  # fmt: skip


def test_the_old_kernel_loader_name_is_the_same_module():
    from admcuda import kernel_loader
    from admcuda.backends.cuda import kernels

    assert kernels is kernel_loader


def test_the_rule_sees_imports_inside_functions():
    """The walk finds a lazy import, so a function-level import cannot hide an arrow."""
    tree = ast.parse("def f():\n    from admcuda.vmaf import score_pair\n")
    assert list(_imports("admcuda.backends.cpu", tree, {"admcuda.vmaf"})) == [
        ("admcuda.vmaf", ["score_pair"])
    ]
