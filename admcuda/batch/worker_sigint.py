"""Imported by each worker process of a local cluster (a Dask preload): Ctrl-C at the
terminal reaches every process of its group, and the batch's own process acts on it
(closing the cluster, writing the summary); a worker that took it too would print a
KeyboardInterrupt traceback of its own. At exit a worker leaves its objects to the
system: the interpreter's last collections over them (Numba's, once a task ran) held the
cluster's close 0.35 s longer."""

from __future__ import annotations

import atexit
import gc
import signal
import threading

if threading.current_thread() is threading.main_thread():  # signal() works only there
    signal.signal(signal.SIGINT, signal.SIG_IGN)
atexit.register(gc.freeze)
