"""`--target onnxruntime`: onnxruntime's own ops and the forms it runs fastest, measured
on its CPU provider (docs/performance.md)."""

from __future__ import annotations

from ..shared import affine_chains, attention, block_products, gemm, normalized, read_outs, rotation
from ..target import Target, TargetForm, lowers

MATMUL_DFT_MAX_LENGTH = 256
"""The longest STFT frame the onnxruntime target runs as a product by its DFT matrix
(a Conv of the frame step), and the longest DFT the cost of an affine chain counts as
a MatMul (`common.fusion`). Over 2^20 real
values, one thread, the dense MatMul takes 0.06 (length 8), 0.30 (64), 0.48 (128) and
0.75 (256) of onnxruntime's DFT, and 1.31 at 512."""

FASTER = frozenset({"DFT", "STFT", "Einsum"})
"""The lowerings measured faster than the op itself on onnxruntime's CPU (DFT: and more
accurate)."""


ONNXRUNTIME = Target(
    name="onnxruntime",
    summary="also onnxruntime's own ops and lowerings where faster (RoPE as "
    "com.microsoft.RotaryEmbedding below opset 23, however it is written, an STFT frame "
    "of length up to 256 as one Conv by the DFT matrix, an Einsum of two operands (or of one and "
    "constants) as one MatMul, a run of small complex matrix products written on their parts as "
    "products of real block matrices, a chain "
    "affine in one real signal through a DFT, such as a spectral filter however spelled, "
    "or a long one such as an unrolled recurrence, as the products that cost least, and "
    "LayerNorm and RMSNorm as one node each, and attention over heads as one node, the "
    "standard Attention from opset 23 and com.microsoft.MultiHeadAttention where it cannot "
    "be, in a model with no complex value too), and a DFT of static length as MatMuls "
    "accurate at float32's level, which onnxruntime's own DFT is not",
    runtime="onnxruntime",
    runs_on="onnxruntime",
    contrib=True,
    where_drops_negative_zero=True,
    forms=(
        rotation(
            "a rotation by a position table (RoPE however written on real values) as one "
            "RotaryEmbedding: com.microsoft's below opset 23, the standard one from 23",
            contrib=True,
        ),
        affine_chains(MATMUL_DFT_MAX_LENGTH, every_model=True),
        normalized(every_model=True),
        TargetForm(
            "faster lowerings",
            "a DFT of static length as accurate MatMuls (`common.transforms`), an STFT of "
            "frames up to 256 as one Conv of the frame step by the DFT matrix (a torch "
            "power spectrum and a Whisper log-mel front end in 0.54 and 0.62 of their "
            "time with the STFT node), "
            "an Einsum of two operands (or of one and constants, contracted first) as "
            "one MatMul with the Transposes and Reshapes that place its letters",
            lowers(FASTER, max_length=MATMUL_DFT_MAX_LENGTH),
            every_model=True,
        ),
        block_products(every_model=True),
        attention(every_model=True, contrib=True),
        gemm(every_model=True),
        read_outs(every_model=True),
    ),
)
