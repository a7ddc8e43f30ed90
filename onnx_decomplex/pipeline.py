"""The library entry point: analyze, rewrite, tidy and check one model."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnx.inliner
import onnx.version_converter
import onnx_graphsurgeon as gs
from onnx import numpy_helper
from onnx.external_data_helper import (
    ExternalDataInfo,
    load_external_data_for_model,
    load_external_data_for_tensor,
    uses_external_data,
)

from . import cmath, contract
from .analyze import analyze
from .check import check, find_complex
from .dtypes import is_complex_np
from .errors import DecomplexError, OptionError, SaveError, UnsupportedError
from .files import Paths, Transaction, write_atomic
from .load import external_tensors, read_model
from .normalize import normalize
from .report import Report, initializer_bytes, op_histogram
from .rewrite import rewrite
from .save import Progress, check_paths, data_file, stage_copy, stage_model
from .shapes import declared_dims
from .tidy import keep_model_fields, name_nodes, tidy
from .trt.engine import (
    EngineError,
    EngineOptions,
    EngineResult,
    build_engine,
    preflight,
    run_engine,
)
from .trt.lint import LintResult, lint
from .trt.lower import lower_for_tensorrt
from .trt.narrow import Narrowed, narrow_double
from .trt.profiles import build_profile
from .validate import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    DEFAULT_TIMEOUT,
    EDGES_BY_DEFAULT,
    Deadline,
    ValidationResult,
    load_expected,
    load_saved,
    npz_bytes,
    random_inputs,
    replay_outputs,
    resolve_shapes,
    validate,
)

MIN_OPSET = 11


def default_opset(model: onnx.ModelProto) -> int:
    """The version of the default ONNX domain the model imports."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise DecomplexError("the model imports no default ONNX opset")


def _with_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy with inferred shapes; they only help rules pick a form, so failure is fine.

    Where shape inference leaves the -1 of a constant Reshape unknown though it is one
    symbolic dim of the input (`Reshape(f[seq, 64], [1, -1, 1, 64])` is `[1, seq, 1,
    64]`), that dim is named and inference runs again, so that rules can see that a
    table's length is the sequence's.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        for _ in range(4):
            named = _name_reshaped_dims(inferred)
            if not named:
                break
            # Inferred again from the named values alone: the others carry made-up names.
            kept = [v for v in inferred.graph.value_info if v.name in named]
            del inferred.graph.value_info[:]
            inferred.graph.value_info.extend(kept)
            inferred = onnx.shape_inference.infer_shapes(inferred)
        return inferred
    except Exception:
        return model


def _name_reshaped_dims(model: onnx.ModelProto) -> set[str]:
    """Names the -1 dim of main-graph Reshapes by a constant shape where it is exactly
    one symbolic dim of the input, and shape inference left it unknown (or gave it a
    made-up `unk__` name); returns the values named."""
    graph = model.graph
    infos = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    constants = {t.name: t for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            constants[n.output[0]] = n.attribute[0].t
    named = set()
    for n in graph.node:
        if n.op_type != "Reshape" or len(n.input) < 2 or n.input[1] not in constants:
            continue
        if any(a.name == "allowzero" and a.i for a in n.attribute):
            continue
        target = numpy_helper.to_array(constants[n.input[1]]).reshape(-1).tolist()
        source, out = infos.get(n.input[0]), infos.get(n.output[0])
        if source is None or out is None:
            continue
        source, dims = declared_dims(source), declared_dims(out)
        if source is None or dims is None or target.count(-1) != 1 or 0 in target:
            continue
        at = target.index(-1)
        made_up = isinstance(dims[at], str) and dims[at].startswith("unk__")
        if (dims[at] is not None and not made_up) or None in source:
            continue
        symbols = [d for d in source if isinstance(d, str)]
        size = int(np.prod([d for d in source if isinstance(d, int)], dtype=np.int64))
        rest = int(np.prod([d for d in target if d != -1], dtype=np.int64))
        if len(symbols) != 1 or rest == 0 or size != rest:
            continue
        out.type.tensor_type.shape.dim[at].dim_param = symbols[0]
        named.add(n.output[0])
    return named


MUL_STRATEGIES = ("auto", "four", "gauss")
TARGETS = ("onnx", "onnxruntime", "tensorrt")
"""onnx: standard ops only, for any runtime; onnxruntime: its own (com.microsoft) ops
too where they are faster; tensorrt: what TensorRT's parser takes."""


def upgrade_opset(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
    """`model` converted to default-domain opset `target` by onnx.version_converter.

    Only upgrades: a newer opset can say more (RotaryEmbedding, from 23), an older
    one could lose meaning. The IR version is raised to what the opset needs.
    """
    current = default_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if target > newest:
        raise OptionError(
            f"target opset {target} is newer than onnx {onnx.__version__} knows; "
            f"it converts up to opset {newest}"
        )
    if target < current:
        raise OptionError(
            f"target opset {target} is older than the model's opset {current}; "
            "only upgrades are done"
        )
    if target == current:
        return model
    try:
        converted = onnx.version_converter.convert_version(model, target)
    except Exception as e:  # the converter raises bare RuntimeErrors
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DecomplexError(f"cannot convert opset {current} to {target}: {first}") from None
    needed = onnx.helper.find_min_ir_version_for(list(converted.opset_import))
    converted.ir_version = max(model.ir_version, needed)
    return converted


def _inline_complex_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inlines the model-local functions whose calls take or make complex values.

    Rules match ONNX ops, not function bodies, so a complex value cannot cross a
    call. Functions that only see real values are kept as they are.
    """
    if not model.functions:
        return model
    local = {(f.domain, f.name) for f in model.functions}
    graph = gs.import_onnx(model)
    graph.toposort()
    analysis = analyze(graph)
    touched = {(u.op_type, u.node) for u in analysis.unsupported}
    calls = {
        (n.domain, n.op)
        for n in graph.nodes
        if (n.domain, n.op) in local and (n.op, n.name) in touched
    }
    if not calls and not [p for p in find_complex(model) if p.startswith("function ")]:
        return model
    ids = sorted(calls or local)
    return onnx.inliner.inline_selected_functions(model, ids, exclude=False)


def _load_read_weights(analysis, external_dir: str | Path | None) -> None:
    """Loads the on-disk constants that rewritten nodes read; the rest stay on disk."""
    for a in analysis.walk():
        for node in a.nodes:
            for t in node.inputs:
                # onnx-graphsurgeon keeps an initializer it has not loaded as LazyValues,
                # which holds the TensorProto: loading it there is what its export uses.
                lazy = getattr(t, "_values", None) if isinstance(t, gs.Constant) else None
                tensor = getattr(lazy, "tensor", None)
                if tensor is None or not uses_external_data(tensor):
                    continue
                if external_dir is None:
                    raise DecomplexError(
                        "its data is on disk and no external_dir was given", tensor=t.name
                    )
                load_external_data_for_tensor(tensor, str(external_dir))


def decomplex(
    model: onnx.ModelProto,
    *,
    mul_strategy: str = "auto",
    target_opset: int | None = None,
    external_dir: str | Path | None = None,
    target: str = "onnx",
    keep_double: bool = False,
) -> tuple[onnx.ModelProto, Report]:
    """Rewrites every complex value of `model` into the packed-real layout.

    A complex tensor of shape S becomes a real one of shape S + [2] holding
    (real, imag): complex64 becomes float32, complex128 becomes float64. Graph
    inputs and outputs keep their names and symbolic dims. `model` is not modified.

    An exporter's mixed graph (typed-complex values read as packed, I/O declared
    packed) is first read as the native-complex model it means (`normalize`); the
    report keeps that model, which is what the rewrite must match.

    Args:
        model: A loaded model, with its external data loaded.
        mul_strategy: Products of two runtime complex operands: "four" real
            products, "gauss" (three), or "auto" (four for elementwise Mul, three
            for MatMul, Gemm and convolutions).
        target_opset: Convert the model to this default-domain opset first (only
            upgrades). At 23 or newer, a complex value times a position table
            becomes one RotaryEmbedding node.
        external_dir: Where the external data of tensors not loaded yet lives (see
            `read_model(..., stream=True)`). Only the constants that rewritten nodes
            read are loaded; the others keep pointing at their files.
        target: "onnx" (standard ops only: the packed-real model any runtime runs),
            "onnxruntime" (onnxruntime's own ops too, where faster: RoPE as
            com.microsoft.RotaryEmbedding below opset 23), or "tensorrt": then what
            TensorRT's parser lacks is lowered too (DFT and STFT to MatMul, Compress
            to Gather) and float64 is narrowed to float32.
        keep_double: With target "tensorrt", leave float64 as it is.

    Returns:
        The rewritten model, checked by shape inference and the full ONNX checker
        (the input model itself when it holds no complex value), and a report. A
        model that still points at external data is checked by `save_model`, where
        its files are.

    Raises:
        UnsupportedError: Complex values reach ops that cannot be rewritten; every
            such node is listed.
        DecomplexError: Anything else that stops the rewrite.
    """
    start = time.perf_counter()
    ops_before, bytes_before = op_histogram(model), initializer_bytes(model)
    model, defaults = _defaults_aside(model)
    normalized = normalize(model)
    model = normalized.model
    if target_opset is not None:
        model = upgrade_opset(model, target_opset)
    opset = default_opset(model)
    if opset < MIN_OPSET:
        raise DecomplexError(f"opset {opset} is older than the oldest supported, {MIN_OPSET}")
    if mul_strategy not in MUL_STRATEGIES:
        raise DecomplexError(f"mul_strategy must be one of {', '.join(MUL_STRATEGIES)}")
    if target not in TARGETS:
        raise DecomplexError(f"target must be one of {', '.join(TARGETS)}")
    report = Report(
        ops_before=ops_before, initializer_bytes_before=bytes_before, warnings=normalized.warnings
    )
    if normalized.changed:
        report.normalized = normalized.model
        report.readings, report.packed_io = normalized.readings, normalized.packed_io
        report.axis0 = normalized.axis0
    model = _inline_complex_functions(model)

    graph = gs.import_onnx(_with_shapes(model))
    name_nodes(graph)
    graph.toposort()
    analysis = analyze(graph)
    in_functions = [p for p in find_complex(model) if p.startswith("function ")]
    if in_functions:
        raise DecomplexError(
            f"complex values inside model-local functions: {', '.join(in_functions)}"
        )
    if analysis.unsupported:
        raise UnsupportedError.of(analysis.unsupported)
    _load_read_weights(analysis, external_dir)
    if not analysis.has_complex:
        native = model
        if report.normalized is not None:  # the reading left no complex value: tidy it
            model = _exported(tidy(graph), model)
        out = _for_target(model, target, opset, keep_double, external_dir, report)
        out = _defaults_back(out, defaults)
        return out, _finish(report, native, out, target, start)

    report.inputs = list(analysis.inputs)
    report.outputs = [t.name for t in graph.outputs if t.name in analysis.complex]
    # Subgraph inputs are the node's packed values, not sources of their own.
    for a in analysis.walk():
        report.initializers += a.initializers
        report.constants += a.constants
        report.casts += a.casts
        report.rewritten += len(a.nodes)

    ctx = rewrite(graph, analysis, opset, mul_strategy, contrib=target == "onnxruntime")
    out = _exported(tidy(graph), model)
    out = _for_target(out, target, opset, keep_double, external_dir, report)
    out = _defaults_back(out, defaults)

    report.emitted = ctx.emitted
    report.explanations = ctx.explanations
    return out, _finish(report, model, out, target, start)


def _finish(
    report: Report, native: onnx.ModelProto, out: onnx.ModelProto, target: str, start: float
) -> Report:
    """Records the I/O contract in `out` (see `contract`) and completes the report."""
    report.contract = contract.contract_of(native, out, target)
    if report.contract:
        contract.record(out, report.contract)
    report.io = contract.io_rows(native, out)
    report.ops_after = op_histogram(out)
    report.initializer_bytes_after = initializer_bytes(out)
    report.seconds = time.perf_counter() - start
    return report


def _defaults_aside(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[onnx.TensorProto]]:
    """An initializer that is also a graph input is a default the caller may override:
    a runtime input, which no rule may fold as a constant. Returns `model` without
    them (a copy, when there are some), and them, for `_defaults_back`."""
    names = {v.name for v in model.graph.input}
    defaults = [t for t in model.graph.initializer if t.name in names]
    if not defaults:
        return model, []
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    kept = [t for t in copy.graph.initializer if t.name not in names]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(kept)
    return copy, defaults


def _defaults_back(model: onnx.ModelProto, defaults: list[onnx.TensorProto]) -> onnx.ModelProto:
    """Puts the defaults of graph inputs back, in the form and type their inputs now
    have (a complex default packed)."""
    if not defaults:
        return model
    if any(uses_external_data(t) for t in defaults):
        raise DecomplexError("a graph input's default value lives in external data: not supported")
    elem = {v.name: v.type.tensor_type.elem_type for v in model.graph.input}
    for t in defaults:
        value = numpy_helper.to_array(t)
        if is_complex_np(value.dtype):
            value = cmath.pack(value)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem.get(t.name) or t.data_type)
        model.graph.initializer.append(numpy_helper.from_array(value.astype(dtype), t.name))
    return model


def _exported(graph: gs.Graph, model: onnx.ModelProto) -> onnx.ModelProto:
    """`graph`, rewritten from `model`, as a checked model with its versions and metadata."""
    out = gs.export_onnx(graph, do_type_check=False)
    keep_model_fields(model, out)
    _fill_output_shapes(out)
    return check(out)


def _for_target(
    model: onnx.ModelProto,
    target: str,
    opset: int,
    keep_double: bool,
    external_dir: str | Path | None,
    report: Report,
) -> onnx.ModelProto:
    """The TensorRT lowering and float64 narrowing, checked again when they change
    anything; `model` itself otherwise."""
    if target != "tensorrt":
        return model
    out, lowered = lower_for_tensorrt(model, opset)
    narrowed = Narrowed()
    if not keep_double:
        out, narrowed = narrow_double(out, external_dir)
    report.lowered, report.lowering_notes = lowered.ops, lowered.notes
    report.matrix_bytes = lowered.matrix_bytes
    report.narrowed, report.clamped = narrowed.places, narrowed.clamped
    if out is model:
        return model
    _fill_output_shapes(out)
    return check(out)


def _fill_output_shapes(model: onnx.ModelProto) -> None:
    """Gives graph outputs with no shape the one inferred on the rewritten model."""
    missing = [o for o in model.graph.output if not o.type.tensor_type.HasField("shape")]
    if not missing:
        return
    inferred = _with_shapes(model)
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    for o in missing:
        v = known.get(o.name)
        if v is not None and v.type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.CopyFrom(v.type.tensor_type.shape)


@dataclass
class ConvertOptions:
    """The options of `convert_file` that stay the same from one model to the next
    (every model of a folder run shares them)."""

    validate: bool = True
    input_shapes: dict[str, tuple[int, ...]] | None = None
    seed: int = 0
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    external_data: bool | None = None
    mul_strategy: str = "auto"
    target_opset: int | None = None
    target: str = "onnx"
    keep_double: bool = False
    validate_timeout: float | None = DEFAULT_TIMEOUT
    edge_values: bool = EDGES_BY_DEFAULT
    providers: list[str] | None = None

    def convert(
        self,
        src,
        dst,
        inputs_file=None,
        progress: Progress | None = None,
        engine: EngineOptions | None = None,
        expected_file=None,
        normalized_path=None,
        save_inputs=None,
        save_outputs=None,
    ) -> FileResult:
        """`convert_file(src, dst)` with these options."""
        return convert_file(
            src,
            dst,
            check_numerics=self.validate,
            input_shapes=self.input_shapes,
            inputs_file=inputs_file,
            expected_file=expected_file,
            normalized_path=normalized_path,
            save_inputs=save_inputs,
            save_outputs=save_outputs,
            providers=self.providers,
            seed=self.seed,
            atol=self.atol,
            rtol=self.rtol,
            external_data=self.external_data,
            mul_strategy=self.mul_strategy,
            target_opset=self.target_opset,
            target=self.target,
            validate_timeout=self.validate_timeout,
            edge_values=self.edge_values,
            keep_double=self.keep_double,
            engine=engine,
            progress=progress,
        )


SAVED_SUFFIX = ".npz"
"""A model's sibling NAME.npz holds its validation inputs, and may hold saved outputs."""

EXPECTED_SUFFIX = ".expected.npz"
"""A model's sibling NAME.expected.npz holds its framework's outputs, by output name."""


def siblings(src: Path) -> tuple[Path | None, Path | None]:
    """The files beside a model NAME.onnx that validation reads when no others are
    given, in folder mode and for one model alike: NAME.npz (inputs, as
    `inputs_file`) and NAME.expected.npz (its framework's outputs, as
    `expected_file`); None for one that does not exist."""
    saved = src.with_suffix(SAVED_SUFFIX)
    expected = src.with_name(src.stem + EXPECTED_SUFFIX)
    return (saved if saved.is_file() else None), (expected if expected.is_file() else None)


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
    validation: ValidationResult | None
    written: list[Path]
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


def _paths(
    src: Path,
    had_external: bool,
    dst: Path,
    inputs_file,
    expected_file,
    normalized_path,
    engine: EngineOptions | None,
    replay: tuple = (None, None),
) -> None:
    """Refuses, before anything is written, a path written that is one read (the input,
    its data files when it `had_external` data, the saved inputs and outputs) or one
    written twice. `replay` is the `save_inputs` and `save_outputs` paths."""
    paths = Paths()
    paths.read(src, "input model")
    locations = set()
    if had_external:  # read as they were before the read loaded some: a small file
        pointing = external_tensors(onnx.load(str(src), load_external_data=False))
        locations = {ExternalDataInfo(t).location for t in pointing}
    for location in sorted(locations):
        paths.read(src.parent / location, f"input's data file '{location}'")
    paths.read(inputs_file, "--load-inputs file")
    paths.read(expected_file, "--expected-outputs file")
    for path, what in ((dst, "output"), (normalized_path, "normalized model")):
        if path is not None:
            paths.write(path, what)
            paths.write(data_file(Path(path)), f"{what}'s data file")
    if engine is not None:
        paths.write(engine.plan, "engine plan")
        paths.write(engine.timing_cache, "timing cache")
    paths.write(replay[0], "--save-inputs file")
    paths.write(replay[1], "--save-outputs file")
    paths.check()


def convert_file(
    src: str | Path,
    dst: str | Path,
    *,
    check_numerics: bool = True,
    input_shapes: dict[str, tuple[int, ...]] | None = None,
    inputs_file: str | Path | None = None,
    expected_file: str | Path | None = None,
    normalized_path: str | Path | None = None,
    seed: int = 0,
    atol: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    external_data: bool | None = None,
    mul_strategy: str = "auto",
    target_opset: int | None = None,
    target: str = "onnx",
    keep_double: bool = False,
    engine: EngineOptions | None = None,
    progress: Progress | None = None,
    validate_timeout: float | None = DEFAULT_TIMEOUT,
    edge_values: bool = EDGES_BY_DEFAULT,
    providers: list[str] | None = None,
    save_inputs: str | Path | None = None,
    save_outputs: str | Path | None = None,
) -> FileResult:
    """The main job: load, rewrite, check, validate, build an engine, save atomically.

    The input is never modified, and no file the run reads is written. Every file is
    written under a temporary name beside its target, validated there, and renamed
    into place only when the whole run passes: a run that fails, validation included,
    leaves what was at OUT and every other path as it was (`result.written` is then
    empty). A model with external data is streamed: its real weights the rewrite does
    not read are copied from file to file, never loaded, unless validation needs them
    (the reference evaluator runs in memory; saved outputs spare it).

    Validation stops past `validate_timeout` seconds (None: no limit) with a
    `ValidationTimeout`. With `edge_values` (the default), random complex inputs
    also hold the values where complex math breaks (`validate.EDGE_VALUES`).

    `expected_file` holds the outputs of the framework that exported the model, by
    output name, computed on the inputs of `inputs_file`: the rewrite is compared
    with them too, even when the model held nothing to rewrite, since an export can
    be valid and still compute something else. `normalized_path` receives the
    native-complex model the rewrite was checked against (see `normalize`).

    With `engine`, the target is "tensorrt". The shape profile, then TensorRT and a
    GPU are checked before anything is rewritten (a bad profile is refused where
    TensorRT is missing too); the engine is built from the rewritten model once it
    passes validation, and run on the same inputs. Validation inputs take the
    profile's opt shapes unless `input_shapes` says otherwise.

    Validation runs the rewrite in onnxruntime with `providers` (full names, see
    `validate.resolve_providers`; CPU when None). `save_inputs` receives the inputs
    validation used (complex arrays, by input name: an `inputs_file` for a replay) as
    soon as they are made, and `save_outputs` the outputs it compared (see
    `validate.replay_outputs`), whether the comparison passes or not; both are
    written whole or not at all, and never over a file the run reads.

    Raises:
        OptionError: An option's value does not fit the model (shapes, profile,
            target opset), naming `src`.
        DecomplexError: Naming `src`, and the node and tensor where one applies.
    """
    src, dst = Path(src), Path(dst)
    replay = (save_inputs, save_outputs)
    try:
        for path in (dst, normalized_path, engine and engine.plan):
            if path is not None:
                check_paths(src, path)
        if expected_file is not None and inputs_file is None and check_numerics:
            raise DecomplexError(
                "expected outputs need the inputs they were computed on (--load-inputs)",
                file=str(expected_file),
            )
        _paths(src, False, dst, inputs_file, expected_file, normalized_path, engine, replay)
        for path in replay:
            if path is not None:
                check_paths(src, path)  # a folder, or in a folder that does not exist
        model, had_external = read_model(src, stream=True)
        if had_external:
            _paths(src, True, dst, inputs_file, expected_file, normalized_path, engine, replay)
        profile, toolkit = None, None
        if engine is not None:
            target = "tensorrt"
            profile = build_profile(model, engine.shapes)
            if not input_shapes:
                input_shapes = profile.logical("opt")
                resolve_shapes(model, input_shapes, "--trt-opt-shapes")
            else:
                profile.check_within(resolve_shapes(model, input_shapes))
            toolkit = preflight(engine.fp16)  # before any work: nothing to undo
        out, report = decomplex(
            model,
            mul_strategy=mul_strategy,
            target_opset=target_opset,
            external_dir=src.parent,
            target=target,
            keep_double=keep_double,
        )
        lint_result = lint(out) if target == "tensorrt" else None
        original = report.normalized or model
        passed_through = not report.changed and out is model
        if external_data is None and had_external:
            external_data = True  # stored that way, written back that way
        with Transaction() as transaction:
            if passed_through:
                staged = stage_copy(src, model, dst, had_external, transaction, progress)
            else:
                staged = stage_model(
                    out,
                    dst,
                    transaction,
                    external_data,
                    source_dir=src.parent,
                    progress=progress,
                    check=bool(external_tensors(out)),  # decomplex left that check to this one
                )
            if normalized_path is not None:
                stage_model(original, normalized_path, transaction, external_data,
                            source_dir=src.parent)  # fmt: skip
            result = FileResult(report, None, [], lint_result)
            checked = not (passed_through and engine is None and expected_file is None)
            if check_numerics and checked:
                _validate(result, src, original, staged, had_external, passed_through,
                          inputs_file, expected_file, input_shapes, seed, atol, rtol, engine,
                          validate_timeout, edge_values, providers=providers,
                          replay=replay)  # fmt: skip
            if result.ok and engine is not None:
                _engine(
                    result, model, staged, engine, profile, toolkit, transaction, check_numerics
                )
            if result.ok:
                result.written = transaction.commit()
                if result.engine is not None:
                    result.engine = dataclasses.replace(result.engine, plan=engine.plan)
        return result
    except DecomplexError as e:
        raise e.at_file(str(src)) from None


def _validate(
    result: FileResult,
    src: Path,
    original: onnx.ModelProto,
    staged: Path,
    had_external: bool,
    passed_through: bool,
    inputs_file,
    expected_file,
    input_shapes,
    seed: int,
    atol: float,
    rtol: float,
    engine: EngineOptions | None,
    timeout: float | None,
    edges: bool,
    *,
    providers: list[str] | None = None,
    replay: tuple = (None, None),
) -> None:
    """Compares the staged rewrite with the reference and with the framework's outputs.
    The inputs are written to `replay[0]` once made, and the outputs compared to
    `replay[1]` once compared, passed or not."""
    save_inputs, save_outputs = replay
    try:
        feeds, expected = load_saved(str(inputs_file), original) if inputs_file else (None, None)
        if expected is None and had_external and not passed_through:
            # The reference evaluator needs every weight in memory.
            load_external_data_for_model(original, str(src.parent))
        if result.report.narrowed:
            # float32 numbers cannot meet float64 tolerances.
            atol, rtol = max(atol, DEFAULT_ATOL), max(rtol, DEFAULT_RTOL)
        if feeds is None:
            shapes = resolve_shapes(original, input_shapes)
            feeds = random_inputs(original, shapes, seed, edges=edges)
        result.feeds = feeds
        if save_inputs is not None:
            write_atomic(Path(save_inputs), npz_bytes(feeds))
            result.saved.append(Path(save_inputs))
        deadline = Deadline(timeout)  # one limit for both comparisons
        if not passed_through or engine is not None:
            result.validation = validate(
                original, staged, feeds, atol=atol, rtol=rtol, expected=expected,
                timeout=deadline, providers=providers,
            )  # fmt: skip
        if expected_file is not None:
            result.framework = validate(
                original, staged, feeds, atol=atol, rtol=rtol,
                expected=load_expected(expected_file, original),
                reference=f"expected outputs {Path(expected_file).name}", timeout=deadline,
                providers=providers,
            )  # fmt: skip
        if save_outputs is not None:
            # Against the reference; against the framework's outputs when only those ran.
            compared = result.validation or result.framework
            write_atomic(Path(save_outputs), npz_bytes(replay_outputs(compared)))
            result.saved.append(Path(save_outputs))
    except MemoryError:
        raise DecomplexError(
            "validation's inputs or outputs do not fit in memory: give smaller "
            "--input-shapes (--no-validate writes it unchecked)"
        ) from None
    except (OptionError, SaveError):
        raise  # the command line or a --save-* path is what to change
    except DecomplexError as e:
        # Validation could not run at all (or ran out of time): nothing is written.
        raise type(e)(f"{e} (--no-validate writes it unchecked)") from None
    result.tolerances = atol, rtol


def _engine(
    result: FileResult,
    model: onnx.ModelProto,
    staged: Path,
    engine: EngineOptions,
    profile,
    toolkit,
    transaction: Transaction,
    check_numerics: bool,
) -> None:
    """Builds the engine from the staged rewrite, and compares its outputs too."""
    try:
        result.engine = build_engine(staged, engine, profile, toolkit, transaction)
    except EngineError as e:
        raise dataclasses.replace(e, message=f"{e.message} (nothing was written)") from None
    if not check_numerics or result.feeds is None:
        return
    names = [o.name for o in model.graph.output]

    def on_engine(packed):
        outputs = run_engine(result.engine.plan, packed, toolkit)
        return [outputs[n] for n in names]

    first = result.validation or result.framework
    atol, rtol = result.tolerances
    result.engine_validation = validate(
        result.report.normalized or model, None, result.feeds, atol=atol, rtol=rtol,
        expected=first.expected, reference=first.reference, runner=on_engine,
        runtime=f"TensorRT {toolkit.version}",
    )  # fmt: skip


def check_tensorrt(
    src: str | Path,
    *,
    mul_strategy: str = "auto",
    target_opset: int | None = None,
    keep_double: bool = False,
) -> tuple[Report, LintResult]:
    """What `--build-engine` would hand TensorRT's parser, checked statically.

    The model is rewritten and lowered for TensorRT in memory, then linted against
    the parser table (`trt.lint`). Nothing is written, and TensorRT is not needed.

    Raises:
        DecomplexError: Naming `src`: the model cannot be read, rewritten or lowered.
    """
    src = Path(src)
    try:
        model, _ = read_model(src, stream=True)
        out, report = decomplex(
            model,
            mul_strategy=mul_strategy,
            target_opset=target_opset,
            external_dir=src.parent,
            target="tensorrt",
            keep_double=keep_double,
        )
        return report, lint(out)
    except DecomplexError as e:
        raise e.at_file(str(src)) from None
