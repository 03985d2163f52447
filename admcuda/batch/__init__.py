"""``admcuda batch`` and :func:`admcuda.score_many`: many pairs from a manifest, scored on
Dask.

- ``manifest``: the manifest's rows, read into jobs
- ``records``: each pair's result, its record for reruns, the summary table
- ``cluster``: the Dask client, scheduler or local cluster a run uses
- ``run``: the tasks the workers run, the plan, and :func:`~admcuda.batch.run.score_many`
"""
