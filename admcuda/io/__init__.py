"""Every way frames come in, behind one opener (:func:`admcuda.io.inputs.open_inputs`).

- ``formats``: pixel formats, bit depths, plane shapes, plane decoding and range checks
- ``names``: what a raw file's name says (size, layout, formats not read)
- ``raw``: the raw YUV reader and what every file reader shares
- ``y4m``: the Y4M header and FRAME markers, and the Y4M file reader
- ``streams``: pipes and standard input (raw or Y4M streams)
- ``ffmpeg``: encoded video decoded by ffmpeg (and ``--scale``)
- ``nvdec``: encoded video decoded on the GPU
- ``inputs``: the opener every subcommand reads through
"""
