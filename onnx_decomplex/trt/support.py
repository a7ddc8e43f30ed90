"""What TensorRT's ONNX parser imports: ops, the types each op takes, and the opsets.

Transcribed from onnx-tensorrt's operator table (docs/operators.md) for the
version in SOURCE. Types are the table's own names. An op that is not listed in
OPS is one the table marks unsupported, or does not mention.
"""

from __future__ import annotations

from onnx import TensorProto

SOURCE = "onnx-tensorrt docs/operators.md, TensorRT 10.15"
OPSETS = (9, 24)
"""The default-domain opsets the parser imports, inclusive."""

SINCE = {"RotaryEmbedding": "10.15", "RMSNormalization": "10.15", "TensorScatter": "10.15"}
"""Ops that older TensorRT 10 parsers reject (onnx-tensorrt's changelog)."""

TYPE_NAMES = {
    TensorProto.FLOAT: "FP32",
    TensorProto.FLOAT16: "FP16",
    TensorProto.BFLOAT16: "BF16",
    TensorProto.INT32: "INT32",
    TensorProto.INT64: "INT64",
    TensorProto.BOOL: "BOOL",
    TensorProto.UINT8: "UINT8",
    TensorProto.INT8: "INT8",
    TensorProto.FLOAT8E4M3FN: "FP8",
    TensorProto.DOUBLE: "DOUBLE",
    # Newer than the oldest onnx this package takes.
    **{getattr(TensorProto, k): v for k, v in (("FLOAT4E2M1", "FP4"), ("INT4", "INT4"))
       if hasattr(TensorProto, k)},  # fmt: skip
}
"""ONNX element types by the table's names; any other type has no TensorRT form."""

IO_TYPES = {"FP32", "FP16", "BF16", "INT32", "INT64", "BOOL", "UINT8", "INT8", "FP8"}
"""Types a network input or output may have (there is no float64 tensor type)."""

_F = ("FP32", "FP16", "BF16")
_FI = (*_F, "INT32", "INT64")
_FIB = (*_FI, "BOOL")
_HALF = ("FP32", "FP16")
_B = ("BOOL",)
_CONST = (*_F, "FP8", "FP4", "INT4", "INT32", "INT64", "BOOL")
_CAST = (*_FI, "UINT8", "BOOL")
_REDUCE = "`axes` must be an initializer"

OPS: dict[str, tuple[tuple[str, ...], str]] = {
    "Abs": (_FI, ""),
    "Acos": (_F, ""),
    "Acosh": (_F, ""),
    "Add": (_FI, ""),
    "And": (_B, ""),
    "ArgMax": (_FI, ""),
    "ArgMin": (_FI, ""),
    "Asin": (_F, ""),
    "Asinh": (_F, ""),
    "Atan": (_F, ""),
    "Atanh": (_F, ""),
    "Attention": ((*_F, "INT8", "FP8"), "Q, K, V 4-D; no past key/value inputs"),
    "AveragePool": (_F, "2-D or 3-D pooling; dilations all ones"),
    "BatchNormalization": (_F, ""),
    "BlackmanWindow": (_HALF, ""),
    "Cast": (_CAST, ""),
    "CastLike": (_CAST, ""),
    "Ceil": (_F, ""),
    "Celu": (_F, ""),
    "Clip": (_F, ""),
    "Concat": (_FIB, ""),
    "Constant": (_CONST, "no sparse or string values"),
    "ConstantOfShape": (_CONST, ""),
    "Conv": (_F, ""),
    "ConvTranspose": (_F, ""),
    "Cos": (_F, ""),
    "Cosh": (_F, ""),
    "CumSum": (_F, "`axis` must be a build-time constant"),
    "DeformConv": (_HALF, "1-D or 2-D spatial dims"),
    "DepthToSpace": (_FI, ""),
    "DequantizeLinear": (("INT8", "FP8", "FP4", "INT4"), "`x_zero_point` must be zero"),
    "Div": (_FI, ""),
    "Dropout": (_F, "`is_training` must be a constant False"),
    "Einsum": (_F, ""),
    "Elu": (_F, ""),
    "Equal": (_FI, ""),
    "Erf": (_F, ""),
    "Exp": (_F, ""),
    "Expand": (_FIB, ""),
    "EyeLike": (_FIB, "`input` must have static dims"),
    "Flatten": (_FIB, ""),
    "Floor": (_F, ""),
    "Gather": (_FIB, ""),
    "GatherElements": (_FIB, ""),
    "GatherND": (_FIB, ""),
    "Gelu": ((*_F, "INT8", "INT32", "INT64"), ""),
    "Gemm": (_F, ""),
    "GlobalAveragePool": (_F, ""),
    "GlobalLpPool": (_F, ""),
    "GlobalMaxPool": (_F, ""),
    "Greater": (_FI, ""),
    "GreaterOrEqual": (_FI, ""),
    "GridSample": (_HALF, "4-D input"),
    "GroupNormalization": (_F, ""),
    "GRU": (_F, ""),
    "HammingWindow": (_HALF, ""),
    "HannWindow": (_HALF, ""),
    "HardSigmoid": (_F, ""),
    "HardSwish": (_F, ""),
    "Hardmax": (_F, "the `axis` dim must be a build-time constant"),
    "Identity": (_FIB, ""),
    "If": (_FIB, "branch outputs of the same rank"),
    "ImageScaler": (_F, ""),
    "InstanceNormalization": (_F, ""),
    "IsInf": (_F, ""),
    "IsNaN": (_FI, ""),
    "LayerNormalization": (_F, "only the first output"),
    "LeakyRelu": (_F, ""),
    "Less": (_FI, ""),
    "LessOrEqual": (_FI, ""),
    "Log": (_F, ""),
    "LogSoftmax": (_F, ""),
    "Loop": (_FIB, "scan outputs of static length; carried shapes constant"),
    "LRN": (_F, ""),
    "LSTM": (_F, "`input_forget` and `layout` must be 0"),
    "LpNormalization": (_F, ""),
    "LpPool": (_F, "dilations all ones"),
    "MatMul": (_F, ""),
    "Max": (_FI, ""),
    "MaxPool": (_F, "2-D or 3-D; no `Indices` output; dilations all ones"),
    "Mean": ((*_F, "FP8", "INT32", "INT64"), ""),
    "MeanVarianceNormalization": (_F, ""),
    "Min": (_FI, ""),
    "Mish": (_HALF, ""),
    "Mod": (_FI, ""),
    "Mul": (_FI, ""),
    "Neg": (_FI, ""),
    "NonMaxSuppression": (_HALF, ""),
    "NonZero": (_HALF, ""),
    "Not": (_B, ""),
    "OneHot": (_FIB, "`depth` must be a build-time constant"),
    "Or": (_B, ""),
    "Pad": (_FI, ""),
    "ParametricSoftplus": (_F, ""),
    "Pow": (_FI, ""),
    "PRelu": (_F, ""),
    "QuantizeLinear": (_F, "`y_zero_point` must be 0"),
    "RandomNormal": (_F, "`seed` is ignored"),
    "RandomNormalLike": (_F, "`seed` is ignored"),
    "RandomUniform": (_F, "`seed` is ignored"),
    "RandomUniformLike": (_F, "`seed` is ignored"),
    "Range": (_FI, ""),
    "Reciprocal": (_F, ""),
    "ReduceL1": (_FI, _REDUCE),
    "ReduceL2": (_FI, _REDUCE),
    "ReduceLogSum": (_FI, _REDUCE),
    "ReduceLogSumExp": (_FI, _REDUCE),
    "ReduceMax": (_FI, _REDUCE),
    "ReduceMean": (_FI, _REDUCE),
    "ReduceMin": (_FI, _REDUCE),
    "ReduceProd": (_FI, _REDUCE),
    "ReduceSum": (_FI, _REDUCE),
    "ReduceSumSquare": (_FI, _REDUCE),
    "Relu": (_FI, ""),
    "Reshape": (_FIB, ""),
    "Resize": (_F, "nearest or linear modes; no antialiasing"),
    "ReverseSequence": (_FIB, ""),
    "RMSNormalization": (_F, ""),
    "RNN": (_F, ""),
    "RoiAlign": (_HALF, ""),
    "RotaryEmbedding": (_F, "`position_ids` must be INT64"),
    "Round": (_F, ""),
    "STFT": (("FP32",), "`frame_step` and `window` must be initializers; real input"),
    "ScaledTanh": (_F, ""),
    "Scan": (_F, ""),
    "Scatter": (_FI, ""),
    "ScatterElements": (_FI, ""),
    "ScatterND": (_FI, "`reduction` must be none"),
    "Selu": (_F, ""),
    "Shape": (_FIB, ""),
    "Shrink": (_FI, ""),
    "Sigmoid": (_F, ""),
    "Sign": (_FI, ""),
    "Sin": (_F, ""),
    "Sinh": (_F, ""),
    "Size": (_FIB, ""),
    "Slice": (_FIB, ""),
    "Softmax": (_F, ""),
    "Softplus": (_F, ""),
    "Softsign": (_F, ""),
    "SpaceToDepth": (_FI, ""),
    "Split": (_FIB, ""),
    "Sqrt": (_F, ""),
    "Squeeze": (_FIB, "`axes` must resolve to a constant"),
    "Sub": (_FI, ""),
    "Sum": (_FI, ""),
    "Tan": (_F, ""),
    "Tanh": (_F, ""),
    "TensorScatter": ((*_F, "INT32"), "4-D; `axis` -2"),
    "ThresholdedRelu": (_F, ""),
    "Tile": (_FIB, ""),
    "TopK": (_FI, "`sorted` must be 1; K below 3840"),
    "Transpose": (_FIB, ""),
    "Trilu": (_FIB, ""),
    "Unsqueeze": (_FIB, "`axes` must resolve to a constant"),
    "Upsample": (_F, ""),
    "Where": (_FIB, ""),
    "Xor": (_B, ""),
}
"""Supported ops: (types of the data input, the table's restrictions)."""

UNSUPPORTED = frozenset(
    "AffineGrid Bernoulli BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor Col2Im "
    "CenterCropPad Compress ConcatFromSequence ConvInteger DFT Det DynamicQuantizeLinear "
    "ImageDecoder MatMulInteger MaxRoiPool MaxUnpool MelWeightMatrix Multinomial "
    "NegativeLogLikelihoodLoss Optional OptionalGetElement OptionalHasElement QLinearConv "
    "QLinearMatMul RegexFullMatch SequenceAt SequenceConstruct SequenceEmpty SequenceErase "
    "SequenceInsert SequenceLength SequenceMap SoftmaxCrossEntropyLoss SplitToSequence "
    "StringConcat StringNormalizer StringSplit TfIdfVectorizer Unique".split()
)
"""Ops the table marks unsupported."""
