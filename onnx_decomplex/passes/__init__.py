"""The passes of a run, one module each; `onnx_decomplex.pipeline.PASSES` lists them in order."""
