"""Ops that have no meaning on complex values, and why.

numpy, and so the reference evaluator, runs several of these on complex arrays by
ordering them lexicographically (real part first). That is an artifact, not a
meaning a model can rely on, so they are refused with the reason below rather than
rewritten. Any other op with no rule is refused as having no complex rule yet.
"""

from __future__ import annotations

_UNORDERED = "complex numbers are not ordered"
_REAL_ONLY = "defined on real numbers only"

NO_MEANING: dict[str, str] = {
    **dict.fromkeys(
        [
            "ArgMax",
            "ArgMin",
            "Clip",
            "Greater",
            "GreaterOrEqual",
            "HardSigmoid",
            "HardSwish",
            "LeakyRelu",
            "Less",
            "LessOrEqual",
            "Max",
            "MaxPool",
            "Min",
            "PRelu",
            "ReduceMax",
            "ReduceMin",
            "Relu",
            "Selu",
            "Elu",
            "Celu",
            "Shrink",
            "ThresholdedRelu",
            "TopK",
        ],
        _UNORDERED,
    ),
    **dict.fromkeys(
        ["Ceil", "Floor", "Erf", "Mod", "BitShift", "Softplus", "Softsign"], _REAL_ONLY
    ),
    "Range": "a complex range has no order to step through",
    "SequenceConstruct": "sequences of complex tensors are not rewritten",
    "SequenceInsert": "sequences of complex tensors are not rewritten",
    "SplitToSequence": "sequences of complex tensors are not rewritten",
    "Optional": "optionals of complex tensors are not rewritten",
}


def reason(op_type: str) -> str:
    """Why a complex value cannot enter `op_type`, which has no rule."""
    return NO_MEANING.get(op_type, "no complex rule")
