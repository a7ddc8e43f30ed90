"""`python -m onnx_decomplex IN OUT`: the `onnx-decomplex` command."""

from .cli.main import run

if __name__ == "__main__":
    run()
