"""`--target onnx`, the default: standard ops only, for any runtime."""

from __future__ import annotations

from .onnxruntime import MATMUL_DFT_MAX_LENGTH
from .shared import (
    ATTENTION,
    ROTATION,
    affine_chains,
    block_products,
    gemm,
    normalized,
    read_outs,
    transforms,
)
from .target import Target

ONNX = Target(
    name="onnx",
    summary="standard ops only, for any runtime: a chain affine in one real signal "
    "through a DFT (a spectral filter, a Fourier layer) as the products that cost least, "
    "LayerNorm and RMSNorm as one node each, a DFT of static length as MatMuls accurate at "
    "float32's level, an STFT of frames up to 256 as one Conv by the DFT matrix, an Einsum of "
    "two operands (or of one and constants) as one MatMul, and a run of small complex matrix "
    "products written on their parts as products of real block matrices, and from opset 23 "
    "attention over heads as one Attention; in a model that "
    "holds complex values, or a DFT or an STFT (complex values in ONNX's packed layout)",
    runtime="onnxruntime",
    where_drops_negative_zero=True,
    forms=(
        ROTATION,
        affine_chains(MATMUL_DFT_MAX_LENGTH),
        normalized(),
        transforms(MATMUL_DFT_MAX_LENGTH),
        block_products(),
        ATTENTION,
        gemm(),
        read_outs(),
    ),
)
