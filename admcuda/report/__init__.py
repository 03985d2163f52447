"""What comes out: ``result`` (:class:`AdmResult`), ``writers`` (libvmaf's JSON, XML, CSV
and subtitle layouts, pooling), ``plot`` (per-frame curves) and ``distmap`` (the
distortion map)."""
