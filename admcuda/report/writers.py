"""Score files in libvmaf's JSON, XML, CSV and subtitle layouts.

The keys, element names and ordering follow libvmaf's ``src/output.c`` (checked
against the files libvmaf 3.2.0's ``vmaf`` writes with ADM, VIF and motion features and
with its models, ``testdata/libvmaf_outputs/``). The differences are deliberate:

- precision: libvmaf prints ``%.6f`` (or ``%.16f`` for tiny values), while these
  writers print every double with Python's shortest round-trip repr, so
  ``float(text)`` gives back the exact value. NaN and infinities are ``null`` in
  JSON and ``nan``/``inf``/``-inf`` in XML, CSV and subtitles.
- ``version`` is the libvmaf version whose numbers admcuda reproduces
  (:data:`LIBVMAF_VERSION`), as tools that read it expect libvmaf's; admcuda's own version
  is beside it, under ``admcuda_version`` (an attribute of ``<VMAF>`` in XML).
- ``fps`` is scored frames per second of wall time; libvmaf divides the frames it
  read by the processor time of its feature extraction.

Each writer renders the whole document first and then writes it in one go: to a
file object as given, or to a path through a temporary file in the same
directory that is renamed into place only once it is complete, with the mode of the
file it replaces. Whether an output would write one of a run's inputs is decided in one
place, :func:`written_input`, for every subcommand and the API's writers.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import math
import os
import re
import select
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, TypeAlias

from admcuda.errors import AdmError
from admcuda.version import __version__

__all__ = [
    "FORMATS",
    "LIBVMAF_VERSION",
    "POOL_METHODS",
    "pool",
    "pooled_metrics",
    "render",
    "render_csv",
    "render_json",
    "render_sub",
    "render_xml",
    "write_output",
]

Frames: TypeAlias = Sequence[Mapping[str, float]]
Pooled: TypeAlias = Mapping[str, Mapping[str, float]]  # name -> {method: value}
OutputFormat: TypeAlias = Literal["json", "xml", "csv", "sub"]

# The layouts of libvmaf's --json, --xml, --csv and --sub.
FORMATS: tuple[str, ...] = ("json", "xml", "csv", "sub")
POOL_METHODS: tuple[str, ...] = ("min", "max", "mean", "harmonic_mean")
# The libvmaf release whose numbers and files admcuda reproduces: the "version" its
# JSON and XML carry.
LIBVMAF_VERSION = "3.2.0"


def pool(values: Sequence[float]) -> dict[str, float]:
    """Pool one feature over frames as libvmaf's ``vmaf_feature_score_pooled`` does.

    ``mean = sum(s) / n`` and ``harmonic_mean = n / sum(1 / (s + 1)) - 1`` (the
    shift by one keeps zero scores finite), with sums accumulated in frame order
    in double precision. ``min``/``max`` start from the first frame and replace
    only on a strict comparison, so a NaN in the first frame sticks and later
    NaNs are skipped, as in C.

    Parameters
    ----------
    values : sequence of float
        Per-frame scores, at least one.

    Returns
    -------
    dict
        ``{"min", "max", "mean", "harmonic_mean"}`` to float.
    """
    if not values:
        raise ValueError("cannot pool an empty sequence of scores")
    total = 0.0
    inverse_total = 0.0
    low = high = float(values[0])
    for raw in values:
        s = float(raw)
        total += s
        inverse_total += _divide(1.0, s + 1.0)
        if s < low:
            low = s
        if s > high:
            high = s
    n = float(len(values))
    return {
        "min": low,
        "max": high,
        "mean": total / n,
        "harmonic_mean": _divide(n, inverse_total) - 1.0,
    }


def _divide(a: float, b: float) -> float:
    """IEEE division, as C does it: x/0 is +-inf, 0/0 and nan/x are nan."""
    if b != 0.0 or math.isnan(b):
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _feature_order(frames: Frames) -> list[str]:
    """Feature names in the order of the first frame; every frame must match."""
    if not frames:
        return []
    names = list(frames[0])
    for index, frame in enumerate(frames):
        if list(frame) != names:
            raise AdmError(
                f"frame {index} has features {sorted(frame)}, expected {sorted(names)} "
                "as in frame 0"
            )
    return names


def _numbers(frames: Frames, frame_numbers: Sequence[int] | None) -> list[int]:
    """``frameNum`` of each frame: 0, 1, 2, ... unless given (``--subsample``)."""
    if frame_numbers is None:
        return list(range(len(frames)))
    numbers = [int(n) for n in frame_numbers]
    if len(numbers) != len(frames):
        raise AdmError(f"{len(numbers)} frame numbers for {len(frames)} frames")
    return numbers


def pooled_metrics(frames: Frames) -> dict[str, dict[str, float]]:
    """Pool every feature of ``frames`` with :func:`pool`.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        Per-frame scores; all frames must carry the same names in the same order.

    Returns
    -------
    dict
        Feature name -> ``{"min", "max", "mean", "harmonic_mean"}``.
    """
    return {name: pool([frame[name] for frame in frames]) for name in _feature_order(frames)}


def _pooled_values(frames: Frames, pooled: Pooled | None) -> Pooled:
    """``pooled`` where given (for the frames' names, in their order), else the frames'
    :func:`pooled_metrics`."""
    if pooled is None:
        return pooled_metrics(frames)
    names = _feature_order(frames)
    if list(pooled) != names:
        raise AdmError(f"pooled values for {sorted(pooled)}, expected {sorted(names)}")
    return pooled


def _json_number(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _text_number(value: float) -> str:
    return repr(float(value))


def _pct(text: str) -> str:
    """``text`` as literal text of a %-template."""
    return text.replace("%", "%%")


def _rows(template: str, frames: Frames, numbers: list[int] | None) -> list[str]:
    """A %-template of one frame's line filled for each frame: its number (a ``%d``, where
    ``numbers`` is given), then its values as floats (a ``%r`` each: :func:`_text_number`),
    in the order of its keys (every frame's order, checked by :func:`_feature_order`)."""
    if numbers is None:
        return [template % tuple(map(float, frame.values())) for frame in frames]
    return [
        template % (number, *map(float, frame.values()))
        for number, frame in zip(numbers, frames, strict=True)
    ]


def render_json(
    frames: Frames,
    *,
    version: str = LIBVMAF_VERSION,
    admcuda_version: str | None = __version__,
    fps: float = math.nan,
    frame_numbers: Sequence[int] | None = None,
    pooled: Pooled | None = None,
    aggregate: Mapping[str, float] | None = None,
) -> str:
    """Render libvmaf's JSON layout.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        Per-frame scores in frame order.
    version : str, optional
        Written as ``"version"``: by default :data:`LIBVMAF_VERSION`, the libvmaf whose
        numbers these are.
    admcuda_version : str or None, optional
        Written as ``"admcuda_version"``, after ``"version"``; admcuda's version by
        default, None to leave the key out.
    fps : float, optional
        Frames per second of the run, written with two decimals; NaN (default)
        or inf gives ``null``.
    frame_numbers : sequence of int, optional
        ``frameNum`` of each frame; 0, 1, 2, ... by default. With libvmaf's
        ``--subsample N`` the scored frames are numbered 0, N, 2N, ...
    pooled : mapping of str to mapping of str to float, optional
        ``pooled_metrics`` to write, one entry per feature in the frames' order
        (``{"min", "max", "mean", "harmonic_mean"}`` each), for values pooled before
        (a file read back); by default :func:`pooled_metrics` of the frames.
    aggregate : mapping of str to float, optional
        ``aggregate_metrics``: the clip's single values (PSNR's ``apsnr_y``, ...), in order;
        empty by default. A value that is not finite is ``null``.

    Returns
    -------
    str
        ``{"version", "admcuda_version", "fps", "frames": [{"frameNum", "metrics"}],
        "pooled_metrics", "aggregate_metrics"}``, ending in a newline.
    """
    import secrets  # here, not at the top: only JSON and file outputs need it

    names = _feature_order(frames)
    pooled = _pooled_values(frames, pooled)
    numbers = _numbers(frames, frame_numbers)
    fps_value = _json_number(fps)
    # the frames are written below, in the place of a string no caller's version holds
    place = f"\x00frames {secrets.token_hex(16)}\x00"
    document: dict[str, Any] = {"version": version}
    if admcuda_version is not None:
        document["admcuda_version"] = admcuda_version
    document |= {
        "fps": None if fps_value is None else round(fps_value, 2),
        "frames": place,
        "pooled_metrics": {
            name: {method: _json_number(value) for method, value in methods.items()}
            for name, methods in pooled.items()
        },
        "aggregate_metrics": {
            name: _json_number(value) for name, value in (aggregate or {}).items()
        },
    }
    text = json.dumps(document, indent=2, allow_nan=False)
    return text.replace(json.dumps(place), _json_frames(frames, names, numbers), 1) + "\n"


def _json_frames(frames: Frames, names: list[str], numbers: list[int]) -> str:
    """The ``"frames"`` list as ``json.dumps(..., indent=2)`` writes it at that depth, a
    frame at a time: the library's encoder visits every value in Python, 4.8 s for a
    2-hour film's 172,800 frames on the 2-core machine this was written on."""
    if not frames:
        return "[]"
    if not names:
        items = [f'    {{\n      "frameNum": {n},\n      "metrics": {{}}\n    }}' for n in numbers]
        return "[\n" + ",\n".join(items) + "\n  ]"
    keys = [f"        {json.dumps(name)}: " for name in names]
    # One template a frame: %d its number, %r each value (float's repr, as json.dumps
    # writes a finite float). A frame with a value that is not finite (its sum is not
    # then, or overflows) is written value by value.
    head = '    {\n      "frameNum": %d,\n      "metrics": {\n'
    tail = "\n      }\n    }"
    template = head + ",\n".join(_pct(k) + "%r" for k in keys) + tail
    finite, text = math.isfinite, float.__repr__
    items = []
    for number, frame in zip(numbers, frames, strict=True):
        values = tuple(map(float, frame.values()))
        if finite(sum(values)):
            items.append(template % (number, *values))
            continue
        metrics = ",\n".join(
            [key + (text(v) if finite(v) else "null") for key, v in zip(keys, values, strict=True)]
        )
        items.append(head % number + metrics + tail)
    return "[\n" + ",\n".join(items) + "\n  ]"


def render_xml(
    frames: Frames,
    *,
    version: str = LIBVMAF_VERSION,
    admcuda_version: str | None = __version__,
    width: int,
    height: int,
    fps: float = math.nan,
    frame_numbers: Sequence[int] | None = None,
    pooled: Pooled | None = None,
    aggregate: Mapping[str, float] | None = None,
) -> str:
    """Render libvmaf's XML layout.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        Per-frame scores in frame order.
    version, admcuda_version : str, optional
        ``<VMAF version=... admcuda_version=...>``, as for :func:`render_json`.
    width, height : int
        ``<params qualityWidth=... qualityHeight=...>``.
    fps : float, optional
        ``<fyi fps=...>`` with two decimals.
    frame_numbers : sequence of int, optional
        ``frameNum`` of each frame, as for :func:`render_json`.
    pooled : mapping of str to mapping of str to float, optional
        ``<pooled_metrics>`` values, as for :func:`render_json`.
    aggregate : mapping of str to float, optional
        ``<aggregate_metrics>``'s attributes, as for :func:`render_json` (``-inf`` as text).

    Returns
    -------
    str
        The document, ending in a newline.
    """
    # imported here: xml.sax.saxutils brings urllib and http with it, a start-up cost of
    # every run that writes no XML
    from xml.sax.saxutils import quoteattr

    names = _feature_order(frames)
    pooled = _pooled_values(frames, pooled)
    tool = "" if admcuda_version is None else f" admcuda_version={quoteattr(admcuda_version)}"
    lines = [
        f"<VMAF version={quoteattr(version)}{tool}>",
        f'  <params qualityWidth="{int(width)}" qualityHeight="{int(height)}" />',
        f'  <fyi fps="{float(fps):.2f}" />',
        "  <frames>",
    ]
    # a float's repr needs no XML escaping: quoteattr only wraps it in double quotes
    row = '    <frame frameNum="%d" ' + "".join(_pct(f"{name}=") + '"%r" ' for name in names) + "/>"
    lines += _rows(row, frames, _numbers(frames, frame_numbers))
    lines += ["  </frames>", "  <pooled_metrics>"]
    for name, methods in pooled.items():
        attrs = "".join(f"{m}={quoteattr(_text_number(v))} " for m, v in methods.items())
        lines.append(f"    <metric name={quoteattr(name)} {attrs}/>")
    attrs = "".join(f"{n}={quoteattr(_text_number(v))} " for n, v in (aggregate or {}).items())
    lines += ["  </pooled_metrics>", f"  <aggregate_metrics {attrs}/>", "</VMAF>"]
    return "\n".join(lines) + "\n"


def render_csv(frames: Frames, *, frame_numbers: Sequence[int] | None = None) -> str:
    """Render libvmaf's CSV layout.

    A ``Frame,<name>,...,`` header, then one ``<index>,<value>,...,`` row per
    frame; libvmaf ends every line with a comma, and so does this.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        Per-frame scores in frame order.
    frame_numbers : sequence of int, optional
        The ``Frame`` column, as for :func:`render_json`.

    Returns
    -------
    str
    """
    names = _feature_order(frames)
    lines = ["Frame," + "".join(f"{name}," for name in names)]
    lines += _rows("%d," + "%r," * len(names), frames, _numbers(frames, frame_numbers))
    return "\n".join(lines) + "\n"


def render_sub(frames: Frames, *, frame_numbers: Sequence[int] | None = None) -> str:
    """Render libvmaf's subtitle layout (``--sub``, MicroDVD).

    One ``{N}{N+1}frame: N|<name>: <value>|...|`` line per frame, shown for the one
    frame it scores; no header, no pooled values.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        Per-frame scores in frame order.
    frame_numbers : sequence of int, optional
        ``N`` of each line, as for :func:`render_json`.

    Returns
    -------
    str
    """
    names = _feature_order(frames)
    numbers = _numbers(frames, frame_numbers)
    row = "".join(_pct(f"{n}: ") + "%r|" for n in names) + "\n"
    heads = [f"{{{number}}}{{{number + 1}}}frame: {number}|" for number in numbers]
    return "".join(h + r for h, r in zip(heads, _rows(row, frames, None), strict=True))


def render(
    fmt: OutputFormat,
    frames: Frames,
    *,
    version: str = LIBVMAF_VERSION,
    admcuda_version: str | None = __version__,
    width: int,
    height: int,
    fps: float = math.nan,
    frame_numbers: Sequence[int] | None = None,
    pooled: Pooled | None = None,
    aggregate: Mapping[str, float] | None = None,
) -> str:
    """Render ``frames`` in ``fmt`` (``"json"``, ``"xml"``, ``"csv"`` or ``"sub"``);
    ``pooled`` and ``aggregate`` as for :func:`render_json` (CSV and subtitles hold
    neither, as libvmaf's)."""
    if fmt == "json":
        return render_json(
            frames, version=version, admcuda_version=admcuda_version, fps=fps,
            frame_numbers=frame_numbers, pooled=pooled, aggregate=aggregate,
        )  # fmt: skip
    if fmt == "xml":
        return render_xml(
            frames, version=version, admcuda_version=admcuda_version, width=width,
            height=height, fps=fps, frame_numbers=frame_numbers, pooled=pooled,
            aggregate=aggregate,
        )  # fmt: skip
    if fmt == "csv":
        return render_csv(frames, frame_numbers=frame_numbers)
    if fmt == "sub":
        return render_sub(frames, frame_numbers=frame_numbers)
    raise AdmError(f"unknown output format {fmt!r}; use one of {', '.join(FORMATS)}")


# Paths that name one of this process's open descriptors: written through it, keeping its
# offset and mode (a shell's >> appends), where reopening would truncate the file it is
# open on, and a rename replace that file. Another process's descriptors are opened.
_OWN_FD = re.compile(r"/dev/fd/(\d+)|/proc/(?:self|thread-self|(\d+)(?:/task/\d+)?)/fd/(\d+)")
_OTHER_FD = re.compile(r"/proc/\d+(?:/task/\d+)?/fd/\d+")
_STD_FDS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _own_fd(path: str) -> int | None:
    if path in _STD_FDS:
        return _STD_FDS[path]
    match = _OWN_FD.fullmatch(path)
    if match is None or (match.group(2) is not None and int(match.group(2)) != os.getpid()):
        return None
    return int(match.group(1) or match.group(3))


class OutputTarget(NamedTuple):
    """Where an output path leads: ``kind`` ``"fd"`` (one of this process's descriptors,
    ``fd``), ``"open"`` (a device, FIFO or another process's descriptor, written as it
    is) or ``"file"`` (a regular file, existing or not, replaced by a rename; through
    links, the file they name); ``"stdout"`` is :class:`StagedOutput`'s for a dest of
    None, ``sys.stdout``, which :func:`output_target` never gives."""

    kind: str
    path: Path
    fd: int | None = None


def output_target(dest: str | os.PathLike[str]) -> OutputTarget:
    """Follow ``dest``'s links, one at a time, to what an output written there would
    write (:class:`OutputTarget`). OSError, naming ``dest``, for a path that ends in a
    slash but is not a folder, or a loop of links."""
    given = os.fspath(dest)
    if given.endswith(os.sep) or os.path.isdir(given):
        code = errno.EISDIR if os.path.isdir(given) else errno.ENOTDIR
        raise OSError(code, os.strerror(code), given)
    # No lexical normalisation: "link/.." is where the link's target's parent is. Folders
    # are resolved by realpath below; a leading "//" is squashed (Linux reads it as "/").
    here = given if os.path.isabs(given) else os.path.join(os.getcwd(), given)
    for _ in range(40):
        here = "/" + here.lstrip("/")
        fd = _own_fd(here)
        if fd is not None:
            return OutputTarget("fd", Path(given), fd)
        if _OTHER_FD.fullmatch(here):
            return OutputTarget("open", Path(given))
        if not os.path.isdir(os.path.dirname(here)):
            break  # a missing folder: nothing to follow; writing there fails, naming dest
        folder = os.path.realpath(os.path.dirname(here))
        spelled = os.path.join(folder, os.path.basename(here))
        if spelled != here:  # a folder on the way was a link (/dev/fd is one)
            here = spelled
            continue
        if not os.path.islink(here):
            break
        here = os.path.join(folder, os.readlink(here))
    else:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), given)
    try:
        mode = os.stat(here).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        return OutputTarget("open", Path(here))
    return OutputTarget("file", Path(here))


STDOUT_NAME = "standard output"  # how errors name a dest of None


class StagedOutput:
    """``text`` (str, written as UTF-8, or bytes as they are) on its way to ``dest``:
    :meth:`stage` writes a regular file's temporary
    sibling, :meth:`commit` renames it over the file (or writes a descriptor, device or
    FIFO, or, for a ``dest`` of None, ``sys.stdout``), :meth:`discard` removes what
    :meth:`stage` left. ``made`` is the regular file a commit replaced or made. Errors
    name ``dest``; writing ``sys.stdout`` fails with AdmError ``"<reason>: standard
    output"`` (BrokenPipeError as it is, for the CLI to stop quietly)."""

    def __init__(self, dest: str | os.PathLike[str] | None, text: str | bytes) -> None:
        self.given = STDOUT_NAME if dest is None else os.fspath(dest)
        self.text = text
        self.made: Path | None = None
        self._tmp: Path | None = None
        if dest is None:
            self.target = OutputTarget("stdout", Path("-"))
            return
        try:
            self.target = output_target(dest)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, self.given) from None

    @property
    def direct(self) -> bool:
        """Whether the commit writes (and may fail there) rather than renames."""
        return self.target.kind != "file"

    def stage(self) -> None:
        if self.direct:
            return
        path = self.target.path
        check_writable(path, self.given)
        # O_EXCL avoids clobbering a stranger's file; mode 0o666 lets the umask decide,
        # so a new file has the same permissions a plain open() would give, and an
        # existing one's mode is copied. The name does not grow with the target's, which
        # may be as long as names may be.
        import secrets

        tmp = path.with_name(f".admcuda-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, self.given) from None
        self._tmp = tmp
        try:
            try:
                copy_mode(path, fd)
            except OSError:
                os.close(fd)
                raise
            with _open_for(self.text, fd) as handle:
                handle.write(self.text)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            self.discard()
            raise OSError(exc.errno, exc.strerror, self.given) from None

    def commit(self) -> None:
        target = self.target
        try:
            if target.kind == "file":
                if self._tmp is None:
                    self.stage()
                os.replace(self._tmp, target.path)  # type: ignore[arg-type]
                self._tmp, self.made = None, target.path
            elif target.kind == "stdout":
                write_stdout(self.text)
            elif target.kind == "fd":
                for stream in (sys.stdout, sys.stderr):
                    if stream is not None:
                        stream.flush()
                data = self.text if isinstance(self.text, bytes) else self.text.encode("utf-8")
                view = memoryview(data)
                while view:
                    view = view[os.write(target.fd, view) :]  # type: ignore[arg-type]
            else:
                with _open_for(self.text, target.path) as handle:
                    handle.write(self.text)
        except BrokenPipeError:
            if target.kind == "stdout" or (target.kind == "fd" and target.fd == 1):
                raise  # the reader of standard output went away: the CLI stops quietly
            self.discard()
            raise AdmError(f"cannot write '{self.given}': its reader closed it") from None
        except OSError as exc:
            self.discard()
            raise OSError(exc.errno, exc.strerror, self.given) from None

    def discard(self) -> None:
        """Remove the temporary file, if any; best effort (a folder made read-only since
        keeps it), so that the error that led here is the one reported."""
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


def _open_for(data: str | bytes, where: int | Path) -> IO[Any]:
    """``where`` (a descriptor or a path) opened for writing ``data``: bytes as they are,
    text as UTF-8 with Unix line ends."""
    if isinstance(data, bytes):
        return open(where, "wb")
    return open(where, "w", encoding="utf-8", newline="\n")


def write_stdout(data: str | bytes) -> None:
    """Write and flush ``sys.stdout`` (bytes to its ``buffer``, after the text before
    them), so that a failing write fails here, not in the interpreter's flush at exit:
    AdmError ``"<reason>: standard output"`` (after :func:`drop_stdout`), or
    BrokenPipeError as it is (the CLI drops it and stops quietly)."""
    stream = sys.stdout
    if stream is None:
        raise AdmError(f"{STDOUT_NAME} is closed")
    try:
        binary = getattr(stream, "buffer", None)
        if isinstance(data, bytes) or isinstance(binary, io.RawIOBase):
            # bytes, or text where the binary layer is raw (PYTHONUNBUFFERED): a raw
            # write may take only part of the data, which the text layer would drop
            stream.flush()
            if binary is None:
                raise AdmError(f"{STDOUT_NAME} takes no bytes here")
            if not isinstance(data, bytes):
                data = data.encode(stream.encoding, stream.errors or "strict")
            _write_fully(binary, data)
            binary.flush()
        else:
            if data:  # an empty write is one too: /dev/full refuses it
                stream.write(data)
            stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        drop_stdout()
        raise AdmError(f"{exc.strerror or exc}: {STDOUT_NAME}") from None


def _write_fully(binary: Any, data: bytes) -> None:
    """Write all of ``data`` to a binary stream. A raw one (unbuffered standard output)
    may take part of it, or none where its descriptor is non-blocking and full: the rest
    is written once there is room."""
    if not data:  # an empty write is one too: /dev/full refuses it
        return
    if not isinstance(binary, io.RawIOBase):
        binary.write(data)
        return
    view = memoryview(data)
    while view:
        done = binary.write(view)
        if done is None:  # non-blocking and full
            select.select([], [binary.fileno()], [])
            continue
        view = view[done:]


def flush_stdout() -> None:
    """Flush ``sys.stdout``, where open, as :func:`write_stdout` does."""
    if sys.stdout is not None:
        write_stdout("")


def drop_stdout() -> None:
    """Point descriptor 1 at the null device, once a write to standard output has failed
    and said so: what Python still buffers for it would fail again at exit, with two
    lines of the interpreter's own. Best effort (a ``sys.stdout`` without a descriptor
    is left as it is)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)


STDIN_NAME = "-"  # an input of that name is standard input (admcuda.io.streams.STDIN)


def written_input(
    dest: str | os.PathLike[str] | None, inputs: Iterable[str | os.PathLike[str]]
) -> str | None:
    """The first of ``inputs`` that an output written to ``dest`` would write, or None.

    ``dest`` None is standard output (descriptor 1), an input ``"-"`` standard input
    (descriptor 0). Files are compared by device and inode, so a symbolic link, a hard
    link, ``/dev/stdout`` or ``/dev/fd/N`` leading to an input is that input; a ``dest``
    that does not exist is an input only by the same absolute name. Terminals, pipes and
    other character devices are written into, not replaced, and are never an input here.
    """
    if dest is not None and not isinstance(dest, (str, bytes, os.PathLike)):
        return None  # a file object: already open, not a name this could replace
    try:
        out = os.fstat(1) if dest is None else os.stat(dest)
    except (OSError, ValueError):
        out = None
    if out is not None and not (stat.S_ISREG(out.st_mode) or stat.S_ISBLK(out.st_mode)):
        return None
    for name in inputs:
        shown = os.fspath(name)
        if out is None:
            if dest is not None and shown != STDIN_NAME:
                if os.path.abspath(dest) == os.path.abspath(shown):
                    return shown
            continue
        try:
            info = os.fstat(0) if shown == STDIN_NAME else os.stat(shown)
        except (OSError, ValueError):
            continue
        if os.path.samestat(out, info):
            return shown
    return None


def write_protected(path: str | os.PathLike[str]) -> bool:
    """Whether an existing regular file at ``path`` (through links) is one not to
    replace: one this process may not write (``os.access``, which is how a shell's
    ``>`` is refused), or one with no write permission for anyone (0444: ``rm`` calls it
    write-protected; root, whom ``os.access`` always lets write, is refused it too)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(mode):
        return False
    no_write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    return not mode & no_write or not os.access(path, os.W_OK)


def check_writable(path: str | os.PathLike[str], shown: str | None = None) -> None:
    """PermissionError (EACCES, naming ``shown``, by default ``path``) where ``path`` is a
    :func:`write_protected` file, or a new file in a folder this process may not write."""
    name = os.fspath(path) if shown is None else shown
    if os.path.exists(path):
        if write_protected(path):
            raise PermissionError(errno.EACCES, "Permission denied (a read-only file)", name)
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(folder) and not os.access(folder, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied (a read-only folder)", name)


def copy_mode(source: str | os.PathLike[str], dest: int | str | os.PathLike[str]) -> None:
    """Give ``dest`` (a path or an open descriptor) the permission bits of ``source``
    where it exists: a file about to be replaced by a rename keeps its mode, as a write
    into it would."""
    try:
        mode = os.stat(source).st_mode
    except FileNotFoundError:
        return
    os.chmod(dest, stat.S_IMODE(mode) & 0o777)


def write_text(dest: str | os.PathLike[str] | None, text: str) -> Path | None:
    """Write ``text`` to ``dest`` as :func:`write_output` writes its documents (None:
    ``sys.stdout``, as :class:`StagedOutput` writes it); the regular file a rename made,
    or None."""
    out = StagedOutput(dest, text)
    commit_all([out])
    return out.made


def commit_all(outputs: Sequence[StagedOutput]) -> None:
    """Stage every output, then write the direct ones (descriptors, devices, FIFOs: the
    writes that can fail), then rename the files into place; on any failure before the
    renames no existing file has changed, and nothing staged is left behind."""
    try:
        for out in outputs:
            out.stage()
        for out in outputs:
            if out.direct:
                out.commit()
        for out in outputs:
            if not out.direct:
                out.commit()
    finally:
        for out in outputs:
            out.discard()


def write_output(
    fmt: OutputFormat,
    frames: Frames,
    dest: str | os.PathLike[str] | IO[str],
    *,
    version: str = LIBVMAF_VERSION,
    admcuda_version: str | None = __version__,
    width: int,
    height: int,
    fps: float = math.nan,
    frame_numbers: Sequence[int] | None = None,
    pooled: Pooled | None = None,
    aggregate: Mapping[str, float] | None = None,
) -> Path | None:
    """Render ``frames`` and write them to ``dest``; the regular file a rename made (the
    file a link names, for a link), or None (a file object, a device, a descriptor).

    Parameters
    ----------
    fmt : {"json", "xml", "csv", "sub"}
        Output layout.
    frames : sequence of mapping of str to float
        Per-frame scores in frame order, keyed by output name.
    dest : path or text file object
        A regular file is written atomically (temporary file in the same directory,
        renamed on success; nothing is left behind on failure), through a link the
        file it names, keeping an existing file's permission bits and refusing a
        :func:`write_protected` one; ``/dev/stdout``, ``/dev/fd/N``, devices and FIFOs are written
        into. A file object receives the text in a single ``write`` call.
    version, admcuda_version : str, optional
        The JSON and XML headers' versions, as for :func:`render_json`.
    width, height : int
        Frame size for the XML header.
    fps : float, optional
        Frames per second of the run, for JSON and XML.
    frame_numbers : sequence of int, optional
        ``frameNum`` of each frame; 0, 1, 2, ... by default.
    pooled : mapping of str to mapping of str to float, optional
        Pooled values for JSON and XML, as for :func:`render_json`.
    aggregate : mapping of str to float, optional
        ``aggregate_metrics`` for JSON and XML, as for :func:`render_json`.

    Raises
    ------
    AdmError
        On inconsistent frames or an unknown format.
    OSError
        If the file cannot be written (PermissionError for a read-only file).
    """
    text = render(
        fmt, frames, version=version, admcuda_version=admcuda_version, width=width,
        height=height, fps=fps, frame_numbers=frame_numbers, pooled=pooled,
        aggregate=aggregate,
    )  # fmt: skip
    if hasattr(dest, "write"):
        dest.write(text)  # type: ignore[union-attr]
        return None
    return write_text(dest, text)  # type: ignore[arg-type]
