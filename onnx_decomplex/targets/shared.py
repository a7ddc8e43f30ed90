"""Forms that several targets list."""

from __future__ import annotations

import functools

from .common.attention import attentions
from .common.blocks import blocks
from .common.fusion import fuse, fuse_read_outs
from .common.gemm import gemms
from .common.narrow import narrow_double
from .common.normalization import normalizations
from .common.rotation import rotations
from .common.transforms import ACCURATE
from .target import Lowering, TargetForm, lowers


def transforms(stft_up_to: int) -> TargetForm:
    """DFTs as accurate MatMuls, STFTs of frames up to `stft_up_to` as one Conv, and
    Einsums as MatMuls (`common.transforms`, `common.einsum`)."""
    return TargetForm(
        "transforms",
        "a DFT of static length as MatMuls by matrices computed in float64 and rounded "
        "once (dense up to length 12, four-step where the length factors, else Bluestein's "
        "chirp-z), since onnxruntime's own float32 DFT is far less accurate than a float32 "
        "FFT (docs/transforms.md); one of dynamic length stays, with a note. An STFT of "
        f"frames up to {stft_up_to} as one Conv of the frame step by the DFT matrix, "
        "faster than onnxruntime's STFT and as accurate as a float32 FFT (onnxruntime's is "
        "not at lengths other than powers of two). And an Einsum "
        "of two operands as one MatMul, with the Transposes and Reshapes that place its "
        "letters (`common.einsum`): 0.18 to 0.95 of the Einsum's time in onnxruntime, with "
        "standard ops only; one of more operands, all constants but one, the same way once "
        "its constants are contracted into one",
        lowers(ACCURATE | {"STFT", "Einsum"}, max_length=stft_up_to),
    )


def _editing(name: str, purpose: str, change, kind: str, every_model: bool) -> TargetForm:
    """A form that edits the model in place (`Lowering.edit`), its edits counted as `kind`."""
    return TargetForm(name, purpose, lambda step: step.edit(change, kind), every_model)


def rotation(purpose: str, contrib: bool = False) -> TargetForm:
    """A rotation by a position table as one RotaryEmbedding (`common.rotation`): with
    `contrib`, com.microsoft's below opset 23."""
    change = functools.partial(rotations, contrib=contrib)
    return _editing("rotation", purpose, change, "rotation", every_model=False)


ROTATION = rotation(
    "from opset 23, a rotation by a position table (RoPE however written on real "
    "values) as the standard RotaryEmbedding node"
)


def affine_chains(matmul_up_to: int, every_model: bool = False) -> TargetForm:
    """Chains affine in one real signal run as products (`common.fusion`), costing a DFT
    of length up to `matmul_up_to` as the MatMul it becomes."""
    return _editing(
        "affine chains",
        "a chain affine in one real signal that holds a DFT (a spectral filter, however "
        "spelled), or is long and small (an unrolled recurrence), read off the chain in "
        "onnxruntime and run as standard products where the cost model finds them "
        "cheaper: a convolution over some axes as the few frequencies where it filters "
        "(`common.convolution`: a Fourier layer), frames of a signal or frames overlapped "
        "and added as one product by blocks of the hop (`common.framing`: an STFT and its "
        "inverse), else one product, or two where M has low rank. Nothing changes without "
        "onnxruntime",
        lambda model: fuse(model, matmul_up_to),
        "affine chain",
        every_model,
    )


def block_products(every_model: bool = False) -> TargetForm:
    """Complex matrix products written on parts as products of real block matrices
    (`common.blocks`)."""
    return _editing(
        "block products",
        "a run of complex matrix products written on their parts (four real MatMuls and "
        "two sums each, as jax2onnx writes them) and of sums of their parts, as one real "
        "MatMul or sum each on the block matrices [[re, -im], [im, re]], where the "
        "products are small enough that the nodes' dispatch costs more than the doubled "
        "multiply-adds",
        blocks,
        "block products",
        every_model,
    )


def normalized(every_model: bool = False) -> TargetForm:
    """LayerNorm and RMSNorm written as means and elementwise ops as one node each
    (`common.normalization`)."""
    return _editing(
        "normalizations",
        "LayerNorm and RMSNorm over the last axis, however spelled in means and "
        "elementwise ops (seven to nine nodes), as one LayerNormalization (from opset 17) "
        "or RMSNormalization (from opset 23), their constant weight and bias taken in; "
        "and the square of an L2 norm as the ReduceSum of its squares",
        normalizations,
        "normalization",
        every_model,
    )


def attention(every_model: bool = False, contrib: bool = False) -> TargetForm:
    """Attention over heads written as ops as one node (`common.attention`): the
    standard Attention from opset 23, and with `contrib` com.microsoft's
    MultiHeadAttention below it."""
    other = ", else one com.microsoft.MultiHeadAttention" if contrib else ""
    return _editing(
        "attention",
        "scaled dot-product attention over heads, written as MatMuls, Transposes, a "
        "scale, a mask's Where or an added bias, and a Softmax (ten to twelve nodes), as one "
        "standard Attention from opset 23 (a scale above 0, no row masked whole with -inf)"
        f"{other}, the mask an additive bias",
        functools.partial(attentions, contrib=contrib),
        "attention",
        every_model,
    )


ATTENTION = attention()


def gemm(every_model: bool = False) -> TargetForm:
    """A product of two matrices less a value, or from one, as one Gemm (`common.gemm`)."""
    return _editing(
        "gemm",
        "a MatMul of two matrices that only a Sub reads, less a value or from one, "
        "as one Gemm (alpha or beta -1), which onnxruntime "
        "does not fuse itself (it fuses an Add), and a Transpose of either matrix as "
        "Gemm's transA or transB, in a sum too (onnxruntime's own Gemm leaves it a node)",
        gemms,
        "gemm",
        every_model,
    )


def read_outs(every_model: bool = False) -> TargetForm:
    """Values moved into one product by constants as that product, the constants moved
    (`common.fusion.fuse_read_outs`)."""
    return _editing(
        "read-outs",
        "a chain of six nodes or more that only moves values (slices, packs, reshapes) "
        "into one MatMul by constants and moves what it makes, left once the other forms "
        "have run (a block product's parts read into a beamformer's quadratic form), as "
        "that one MatMul, its constants moved instead, where the nodes' dispatch costs more",
        fuse_read_outs,
        "read-out",
        every_model,
    )


def _narrow(step: Lowering) -> None:
    if step.keep_double:
        return
    step.model, narrowed = narrow_double(step.model, step.external_dir)
    step.narrowed, step.clamped = narrowed.places, narrowed.clamped


NARROW = TargetForm(
    "float64 narrowed",
    "float64 narrowed to float32 (`common.narrow`), for a runtime that has no float64 "
    "arithmetic, unless --keep-double",
    _narrow,
    every_model=True,
)
