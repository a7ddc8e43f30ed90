"""The rule registry: one rule per op type, registered with `@rule`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..dtypes import promote
from ..graphs import is_default_domain

if TYPE_CHECKING:
    import onnx_graphsurgeon as gs

    from .protocol import RuleContext

# For each input, its complex dtype, or None when it is real.
InputKinds = Sequence["np.dtype | None"]
Infer = Callable[["gs.Node", InputKinds], list["np.dtype | None"]]
RuleFn = Callable[["RuleContext", "gs.Node"], None]
# Given the node, its input kinds and the default-domain opset of its graph, why the
# rule cannot rewrite it, or None. Shapes (inferred before analysis) and constants
# are read from the node's tensors.
Refuse = Callable[["gs.Node", InputKinds, int], "str | None"]


def accepts_all(node: gs.Node, kinds: InputKinds, opset: int) -> str | None:
    return None


def real_outputs(node: gs.Node, kinds: InputKinds) -> list[np.dtype | None]:
    """Every output is real, whatever the inputs (Shape, Abs, Equal, ...)."""
    return [None] * len(node.outputs)


def complex_like_inputs(node: gs.Node, kinds: InputKinds) -> list[np.dtype | None]:
    """Every output is complex, with numpy's promotion of the complex inputs."""
    found = [k for k in kinds if k is not None]
    dtype = promote(*found) if found else None
    return [dtype] * len(node.outputs)


@dataclass(frozen=True)
class Rule:
    """A registered rewrite.

    `fn` emits real nodes, `infer` says which outputs are complex, and `refuse` says
    why a particular node cannot be rewritten (checked for every node before any
    rewriting, so that one error lists them all).
    """

    op_type: str
    fn: RuleFn
    infer: Infer
    refuse: Refuse = accepts_all

    @property
    def where(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


REGISTRY: dict[str, Rule] = {}


def rule(
    *op_types: str, infer: Infer = complex_like_inputs, refuse: Refuse = accepts_all
) -> Callable[[RuleFn], RuleFn]:
    """Registers `fn` as the rewrite of each op type in `op_types`.

    Args:
        *op_types: ONNX op types (default domain) the rule handles.
        infer: Given the node and the complex dtype (or None) of each input, returns
            the complex dtype (or None) of each output. Analysis uses it to find every
            complex value before anything is rewritten.
        refuse: Given the same and the opset, returns why this node cannot be
            rewritten, or None. Every refusal is known here, before any node is
            rewritten: a rule itself never refuses.

    Raises:
        ValueError: An op type already has a rule. Silently replacing a rule would
            hide which of two modules actually runs.
    """

    def register(fn: RuleFn) -> RuleFn:
        for op in op_types:
            if op in REGISTRY:
                raise ValueError(f"{op} already has a rule: {REGISTRY[op].where}")
            REGISTRY[op] = Rule(op, fn, infer, refuse)
        return fn

    return register


def get(op_type: str, domain: str = "") -> Rule | None:
    """The rule for an op, or None. Only the default ONNX domain has rules."""
    if not is_default_domain(domain):
        return None
    return REGISTRY.get(op_type)


def supported_ops() -> frozenset[str]:
    """Every op type that has a rule."""
    return frozenset(REGISTRY)
