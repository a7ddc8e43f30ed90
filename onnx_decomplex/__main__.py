"""`python -m onnx_decomplex IN OUT`: the `onnx-decomplex` command."""

from .cli.main import main

if __name__ == "__main__":
    main()
