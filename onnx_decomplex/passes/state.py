"""What the passes hand one another: one model's state, and the outcome of a file run."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import onnx
import onnx_graphsurgeon as gs

from ..analyze import Analysis
from ..files.save import Progress
from ..files.stream import Streamed
from ..files.transaction import Transaction
from ..options import Options, option
from ..report import Report
from ..trt.engine import EngineOptions, EngineResult
from ..trt.lint import LintResult
from ..validate import DEFAULT_ATOL, DEFAULT_RTOL, ValidationResult


@dataclass(frozen=True)
class Files:
    """The files a run on one model reads and writes besides IN and OUT.

    The framework's outputs (`expected`, computed on `inputs`) are compared with the
    rewrite even when the model held nothing to rewrite, since an export can be valid
    and still compute something else. `normalized` receives the native-complex model the
    rewrite was checked against (see `normalize`). `save_inputs` receives the inputs
    validation used (an `inputs` file for a replay) as soon as they are made, and
    `save_outputs` the outputs it compared (see `validate.replay_outputs`), whether the
    comparison passes or not; both are written whole or not at all, and never over a file
    the run reads.
    """

    inputs: Path | None = option(
        None,
        ".npz of inputs for the original model, by input name (complex or packed arrays). "
        "Default: IN's sibling NAME.npz, when there is one.",
        flag="--load-inputs",
    )
    expected: Path | None = option(
        None,
        ".npz of the exporting framework's own outputs on --load-inputs, by output name "
        "(complex or packed arrays): the rewrite must match them too. Default: IN's sibling "
        "NAME.expected.npz, when there is one.",
        flag="--expected-outputs",
    )
    save_inputs: Path | None = option(
        None,
        ".npz to write the inputs validation used to (complex arrays, by input name), "
        "passed or failed: --load-inputs replays them.",
    )
    save_outputs: Path | None = option(
        None,
        ".npz to write the outputs validation compared to, passed or failed: the rewrite's "
        "by output name (complex arrays), the reference's as expected:NAME.",
    )
    normalized: Path | None = option(
        None,
        "Also write the native-complex model the rewrite was checked against: an "
        "exporter's mixed graph read as it means (the input itself when nothing needed "
        "reading).",
        flag="--save-normalized",
    )


@dataclass
class FileResult:
    """The outcome of `convert_file`.

    Attributes:
        report: What the rewrite found and changed.
        validation: The comparison with the reference, or None when skipped.
        written: The files written; none when the run did not pass.
        lint: The static TensorRT check, with target "tensorrt".
        engine: The engine built, with `engine` options.
        engine_validation: The engine's outputs compared with the reference.
        framework: The comparison with the framework's own outputs
            (`expected_file`), or None without them.
        saved: The inputs and outputs files written for a replay (`save_inputs`,
            `save_outputs`), whether or not the run passed.
    """

    report: Report
    validation: ValidationResult | None = None
    written: list[Path] = field(default_factory=list)
    lint: LintResult | None = None
    engine: EngineResult | None = None
    engine_validation: ValidationResult | None = None
    framework: ValidationResult | None = None
    feeds: dict | None = field(default=None, repr=False)
    tolerances: tuple[float, float] = (DEFAULT_ATOL, DEFAULT_RTOL)
    saved: list[Path] = field(default_factory=list)

    @property
    def validations(self) -> list[ValidationResult]:
        """Every comparison that ran."""
        found = (self.validation, self.framework, self.engine_validation)
        return [v for v in found if v is not None]

    @property
    def ok(self) -> bool:
        return all(v.passed for v in self.validations)


@dataclass
class State:
    """One model as it goes through the passes.

    A run in memory (`decomplex`) starts with `model`; a file run (`convert_file`)
    with `src` and `dst`, and the load pass reads `model`.

    Attributes:
        options: The run's options, by concern.
        model: The model as it now stands.
        report: What the passes found and changed, filled as they run.
        src: The input model's path, for a file run.
        dst: The output's path, for a file run.
        files: The other files the run reads and writes.
        engine: The `--build-engine` options, or None.
        progress: Told as the output's data file grows.
        external_dir: Where the data of tensors not loaded yet lives.
        source: The model as given (as read, for a file run), before any pass.
        native: The model the rewrite must match: `source` read as it means
            (normalized, upgraded, its complex functions inlined).
        data_files: The files the input keeps tensor data in, by location (relative to
            its folder), as its read found them (`load.read_model`).
        defaults: Graph inputs' default values, set aside while no rule may fold them.
        opset: The default-domain opset of `native`.
        graph: `native` in onnx-graphsurgeon, from analysis to tidying; from
            normalizing, where the model it read is `native` (one import serves both).
        tensors: `graph.tensors()`, from normalizing to analysis, with `graph`.
        analysis: Which values are complex, and what the rules will meet.
        profile: The TensorRT shape profile, with `engine`.
        toolkit: TensorRT and its GPU, checked before any work, with `engine`.
        lint: The static TensorRT check, with target "tensorrt".
        streamed: Where large complex initializers are rewritten on disk, for a
            file run (see `stream`).
        transaction: The files staged by this run, for a file run.
        staged: The output's temporary path, once staged.
        result: The outcome of a file run.
        held: The tensors that hold each complex value, once rewritten (`Forms.held`); a
            validation that fails traces its values by them. For a conversion made
            elsewhere (`verify`), a callable that rewrites the original again for them.
    """

    options: Options
    model: onnx.ModelProto | None = None
    report: Report = field(default_factory=Report)
    src: Path | None = None
    dst: Path | None = None
    files: Files = field(default_factory=Files)
    engine: EngineOptions | None = None
    progress: Progress | None = None
    external_dir: Path | None = None
    source: onnx.ModelProto | None = None
    native: onnx.ModelProto | None = None
    data_files: tuple[str, ...] = ()
    defaults: list[onnx.TensorProto] = field(default_factory=list)
    opset: int = 0
    graph: gs.Graph | None = None
    tensors: dict[str, gs.Tensor] | None = None
    analysis: Analysis | None = None
    profile: object = None
    toolkit: object = None
    lint: LintResult | None = None
    streamed: Streamed | None = None
    transaction: Transaction | None = None
    staged: Path | None = None
    result: FileResult | None = None
    held: object = None
    start: float = field(default_factory=time.perf_counter)

    @property
    def had_external(self) -> bool:
        """Whether the input keeps tensor data in files of its own."""
        return bool(self.data_files)

    @property
    def may_point(self) -> bool:
        """Whether `model` may point at external data: in a file run, only where the
        input kept data in files (only such tensors are left on disk)."""
        return self.src is None or self.had_external

    @property
    def rewritten(self) -> bool:
        """Whether the rewrite makes the output: the model held complex values, or an
        exporter's graph was read as the native-complex model it means."""
        return self.analysis.has_complex or self.report.normalized is not None

    @property
    def passed_through(self) -> bool:
        """True when the output is the input as it was: nothing complex, nothing lowered."""
        return not self.report.changed and self.model is self.source

    @property
    def original(self) -> onnx.ModelProto:
        """The model validation runs in the reference: the exporter's graph read as it
        means when it had to be, the input otherwise."""
        return self.report.normalized or self.source
