"""``admcuda batch`` and :func:`admcuda.score_many`: many pairs from a manifest, scored
on Dask."""
