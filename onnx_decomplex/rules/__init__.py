"""Rewrite rules, one module per op family. Importing this package registers them all."""

from . import arithmetic, cast, constant, layout  # noqa: F401  (imported to register)
from .registry import REGISTRY, Rule, get, rule, supported_ops

__all__ = ["REGISTRY", "Rule", "get", "rule", "supported_ops"]
