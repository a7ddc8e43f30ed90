"""Rewrite rules, one module per op family. Importing this package registers them all."""

from . import (  # noqa: F401  (imported to register)
    arithmetic,
    cast,
    constant,
    control_flow,
    indexing,
    layout,
    linalg,
    reduce,
    shape,
    spectral,
    unary,
)
from .protocol import RuleContext
from .registry import REGISTRY, Rule, get, rule, supported_ops

__all__ = ["REGISTRY", "Rule", "RuleContext", "get", "rule", "supported_ops"]
