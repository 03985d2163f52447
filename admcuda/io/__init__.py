"""Every way frames come in, behind one opener (:func:`admcuda.io.inputs.open_inputs`).

- ``raw``: pixel formats, file-name hints, plane decoding, the raw YUV reader
- ``y4m``: the Y4M header and FRAME markers, and the Y4M file reader
- ``streams``: pipes and standard input (raw or Y4M streams)
- ``ffmpeg``: encoded video decoded by ffmpeg (and ``--scale``)
- ``nvdec``: encoded video decoded on the GPU
- ``inputs``: the opener every subcommand reads through
"""
