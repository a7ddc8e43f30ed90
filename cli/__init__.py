"""The `onnx-decomplex` command: a thin layer over the library (installed as onnx_decomplex.cli)."""
