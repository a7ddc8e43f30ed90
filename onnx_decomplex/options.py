"""The options of a run, one frozen object per concern.

The command line, the library, the JSON report and the baseline all read these
classes: a field's `help` is its `--help` text, its name is its flag (`mul_strategy`
is `--mul-strategy`, unless `flag` says otherwise) and its key in the report's
`options`. Adding an option means adding one field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import OptionError
from .shapes import SYNTAX
from .targets import TARGETS as _TARGETS
from .targets import Target
from .validate import DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_TIMEOUT, EDGES_BY_DEFAULT, RUNTIMES

MUL_STRATEGIES = ("auto", "four", "gauss")
"""auto: four products for elementwise Mul, three for MatMul, Gemm and convolutions."""

TARGETS = tuple(_TARGETS)
"""The `--target` names (`targets.TARGETS`)."""


DEFAULT_MAX_ERROR_GROWTH = 10.0
DEFAULT_MAX_NODE_GROWTH = 10.0


def option(default: Any = None, help: str = "", *, flag: str | None = None,
           reported: bool = True, factory=None) -> Any:  # fmt: skip
    """A field of an options class: its default, its help, its flag when not
    `--field-name`, and whether the JSON report records it."""
    metadata = {"help": help, "flag": flag, "reported": reported}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def flag(f: dataclasses.Field) -> str:
    """The command-line flag of a field: `--mul-strategy` for `mul_strategy`."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


class _Options:
    """What every options class can do."""

    def reported(self) -> dict[str, Any]:
        """The fields the JSON report records, by name."""
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.metadata.get("reported", True)
        }

    def changed(self) -> list[str]:
        """The flags of the fields not at their defaults."""
        default = type(self)()
        return [flag(f).split("/")[0] for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(default, f.name)]  # fmt: skip


def _plain(value: Any) -> Any:
    """`value` as JSON holds it."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


@dataclass(frozen=True)
class RewriteOptions(_Options):
    """How complex values are rewritten."""

    mul_strategy: str = option(
        "auto",
        "Products of two runtime complex operands: four real products, or Gauss's three. "
        "auto: four for elementwise Mul and for small matrix products (which the targets run as "
        "products of block matrices), three for other MatMuls, Gemm and convolutions.",
    )
    target_opset: int | None = option(
        None,
        "Convert the model to this opset first (upgrades only, up to the newest the "
        "installed onnx knows). At 23 or newer, RoPE's complex-times-position-table becomes "
        "one RotaryEmbedding node.",
    )

    def __post_init__(self):
        if self.mul_strategy not in MUL_STRATEGIES:
            raise OptionError(f"mul_strategy must be one of {', '.join(MUL_STRATEGIES)}")


@dataclass(frozen=True)
class TargetOptions(_Options):
    """The runtime the output is for."""

    target: str = option(
        "onnx",
        "The runtime the output is for. "
        + " ".join(f"{t.name}: {t.summary}." for t in _TARGETS.values()),
    )
    keep_double: bool = option(False, "With --target tensorrt or openvino, leave float64 as it is.")

    def __post_init__(self):
        if self.target not in TARGETS:
            raise OptionError(f"target must be one of {', '.join(TARGETS)}")

    @property
    def chosen(self) -> Target:
        """The target itself: its forms and what it allows."""
        return _TARGETS[self.target]


@dataclass(frozen=True)
class ValidateOptions(_Options):
    """How the rewrite is compared with the original."""

    validate: bool = option(
        True,
        "Compare the rewrite (in the target's runtime, --runtime) with the original "
        "(onnx.reference). On by default.",
        flag="--validate/--no-validate",
    )
    input_shapes: dict[str, tuple[int, ...]] | None = option(
        None, "Shapes for inputs with symbolic dims.", reported=False
    )
    runtime: str | None = option(
        None,
        "The runtime the rewrite is validated in: onnxruntime, or openvino (its CPU plugin, "
        "in f32; pip install 'onnx-decomplex[openvino]'). Default: the target's, openvino "
        "for --target openvino (onnxruntime, with a note, where OpenVINO is not installed) "
        "and onnxruntime for the others.",
    )
    providers: list[str] | None = option(
        None,
        "onnxruntime execution providers for the rewrite, in priority order. Default: cpu.",
    )
    seed: int = option(0, "Seed for random inputs.")
    atol: float = option(DEFAULT_ATOL, "Absolute tolerance.")
    rtol: float = option(DEFAULT_RTOL, "Relative tolerance, against |expected|.")
    validate_timeout: float | None = option(
        DEFAULT_TIMEOUT,
        "Seconds validation may take, per model; past them the run stops, writes nothing "
        "and exits 4. 0: no limit.",
    )
    edge_values: bool = option(
        EDGES_BY_DEFAULT,
        "Random complex inputs also hold 0, values on each axis beyond 1, and magnitudes "
        "of 1e20 and 1e-30 (complex64 only).",
        flag="--edge-values/--no-edge-values",
    )

    def __post_init__(self):
        if self.runtime is not None and self.runtime not in RUNTIMES:
            raise OptionError(f"runtime must be one of {', '.join(RUNTIMES)}")

    @property
    def timeout(self) -> float | None:
        """The time limit in seconds; None for none (0 on the command line)."""
        return self.validate_timeout or None


@dataclass(frozen=True)
class OutputOptions(_Options):
    """How the output is written."""

    external_data: bool | None = option(
        None,
        "Keep tensor data in OUT.data beside OUT. Default: when IN keeps its data that way, "
        "or the model is over 2 GB.",
        flag="--external-data/--no-external-data",
        reported=False,
    )


@dataclass(frozen=True)
class EngineOptions(_Options):
    """The `--build-engine` options: a TensorRT engine built from the output (one model
    at a time, so no report records them)."""

    plan: Path | None = option(
        None,
        "Build a TensorRT engine (.plan or .engine) from OUT, and run it on the validation "
        "inputs. Needs TensorRT 10 or 11 and an NVIDIA GPU.",
        flag="--build-engine",
        reported=False,
    )
    trt_min_shapes: dict[str, tuple] = option(
        help=f"Profile shapes for dynamic inputs: {SYNTAX}; a complex input's logical shape "
        "(the trailing 2 is added) or its packed one. Checked against the model before "
        "TensorRT is loaded.",
        factory=dict,
        reported=False,
    )
    trt_opt_shapes: dict[str, tuple] = option(
        help="As --trt-min-shapes; also the validation shapes. One kind alone fixes the shape.",
        factory=dict,
        reported=False,
    )
    trt_max_shapes: dict[str, tuple] = option(
        help="As --trt-min-shapes.", factory=dict, reported=False
    )
    pool_limit: dict[str, int] = option(
        help="Memory pool limit, as in workspace:2G (a unit is required: B, K, M, G).",
        factory=dict,
        reported=False,
    )
    timing_cache: Path | None = option(
        None, "Timing cache file: read if present, written after the build.", reported=False
    )
    builder_optimization_level: int | None = option(
        None, "TensorRT's builder optimization level (default 3).", reported=False
    )
    fp16: bool = option(False, "Allow FP16 kernels (TensorRT 10 only).", reported=False)

    @property
    def shapes(self) -> dict[str, dict[str, tuple]]:
        """The profile's shapes by kind: "min", "opt", "max"."""
        return {"min": self.trt_min_shapes, "opt": self.trt_opt_shapes,
                "max": self.trt_max_shapes}  # fmt: skip


@dataclass(frozen=True)
class ReportOptions(_Options):
    """Where a folder run's report goes, and the baseline it is held to: shared by a
    folder run and a merge of shard reports."""

    report: Path | None = option(None, "Write the JSON report (schema in docs/report.md) here.")
    junit: Path | None = option(None, "Write JUnit XML here: one testcase per model.")
    baseline: Path | None = option(
        None, "An earlier JSON report: exit 1 on any regression against it."
    )
    update_baseline: bool = option(
        False, "Write this run's report to --baseline (creating it), and exit 0."
    )
    max_error_growth: float = option(
        DEFAULT_MAX_ERROR_GROWTH,
        "A worst output error that grows past this factor is a regression.",
    )
    max_node_growth: float = option(
        DEFAULT_MAX_NODE_GROWTH,
        "A node count that grows past this percentage is a regression.",
    )


@dataclass(frozen=True)
class Options:
    """Every option that stays the same from one model to the next (each model of a
    folder run shares them), by concern."""

    rewrite: RewriteOptions = field(default_factory=RewriteOptions)
    target: TargetOptions = field(default_factory=TargetOptions)
    validate: ValidateOptions = field(default_factory=ValidateOptions)
    output: OutputOptions = field(default_factory=OutputOptions)

    @classmethod
    def of(cls, **values) -> Options:
        """Options from field names of any concern: `Options.of(target="tensorrt",
        atol=1e-3)`.

        Raises:
            OptionError: A name no concern has.
        """
        parts = {}
        for name, concern in _concerns():
            names = {f.name for f in dataclasses.fields(concern)}
            parts[name] = concern(**{k: values.pop(k) for k in list(values) if k in names})
        if values:
            raise OptionError(f"unknown option(s): {', '.join(sorted(values))}")
        return cls(**parts)

    def replace(self, **values) -> Options:
        """A copy with the fields named changed, in whichever concern holds them."""
        current = {
            f.name: getattr(getattr(self, c.name), f.name)
            for c in dataclasses.fields(self)
            for f in dataclasses.fields(getattr(self, c.name))
        }
        return Options.of(**{**current, **values})

    def reported(self) -> dict[str, Any]:
        """The report's `options`: every reported field of every concern, by name."""
        found = {}
        for concern in dataclasses.fields(self):
            found.update(getattr(self, concern.name).reported())
        return found


def _concerns() -> list[tuple[str, type]]:
    """The concerns of `Options`: (attribute, class)."""
    return [(f.name, f.default_factory) for f in dataclasses.fields(Options)]
