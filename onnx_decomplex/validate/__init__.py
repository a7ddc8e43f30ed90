"""Compare the rewrite, run in onnxruntime or OpenVINO, with the original run by the
reference evaluator.

The reference evaluator (`onnx.reference`) runs complex graphs in numpy; what it
computes is what the original model means. Three guards keep the verdict honest:

- a time limit for the whole comparison (`DEFAULT_TIMEOUT`, `ValidationTimeout`);
- a failure at float32 is judged again against the original run in float64, within
  float32's noise floor there (`noise`), so that float32's rounding, which both sides
  make, is not blamed on the rewrite; a failure at float64, within float64's own;
- random inputs carry `EDGE_VALUES`, where math rules break, and quiet rows (`QUIET`),
  where an epsilon shows.

By concern:

- `compare`: `validate` itself, which makes the inputs, runs both sides and judges;
  `settings`: `Settings`, what one call is asked to do (its keyword arguments);
- `inputs`: shapes, seeded random inputs, quiet rows and edge values; `npz`: inputs and
  saved outputs in .npz files;
- `runners`: the reference evaluator's run, onnxruntime's (with its providers) and
  OpenVINO's, and the `Deadline` they share;
- `judge`: tolerances, one output compared, and the split by edge values; `precision`:
  the float64 rejudge, with float32's breakdown left out; `noise`: a precision's noise
  floor;
- `results`: what is reported (`OutputResult`, `EdgeSplit`, `ValidationResult`) and the
  outputs `--save-outputs` writes.
"""

from .compare import validate
from .inputs import (
    DEFAULT_DIM,
    EDGE_VALUES,
    EDGE_VALUES_128,
    EDGES_BY_DEFAULT,
    QUIET,
    REAL_EDGE_VALUES,
    edge_positions,
    edge_values,
    edges_in,
    random_inputs,
    resolve_shapes,
    with_edges,
    without_edges,
)
from .npz import EXPECTED, load_expected, load_saved, npz_bytes
from .precision import PRECISION_FACTOR, upcast
from .results import EdgeSplit, OutputResult, ValidationResult, replay_outputs
from .runners import (
    DEFAULT_TIMEOUT,
    OPENVINO_CONFIG,
    PROVIDERS,
    RUNTIME_HINT,
    RUNTIMES,
    Deadline,
    choose_runtime,
    import_onnxruntime,
    import_openvino,
    import_runtime,
    resolve_providers,
    run_onnxruntime,
    run_openvino,
    run_reference,
)
from .settings import DEFAULT_ATOL, DEFAULT_RTOL, Settings

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_DIM",
    "DEFAULT_RTOL",
    "DEFAULT_TIMEOUT",
    "EDGES_BY_DEFAULT",
    "EDGE_VALUES",
    "EDGE_VALUES_128",
    "EXPECTED",
    "PRECISION_FACTOR",
    "OPENVINO_CONFIG",
    "PROVIDERS",
    "QUIET",
    "REAL_EDGE_VALUES",
    "RUNTIMES",
    "RUNTIME_HINT",
    "Deadline",
    "EdgeSplit",
    "OutputResult",
    "Settings",
    "ValidationResult",
    "edge_positions",
    "edge_values",
    "edges_in",
    "choose_runtime",
    "import_onnxruntime",
    "import_openvino",
    "import_runtime",
    "load_expected",
    "load_saved",
    "npz_bytes",
    "random_inputs",
    "replay_outputs",
    "resolve_providers",
    "resolve_shapes",
    "run_onnxruntime",
    "run_openvino",
    "run_reference",
    "upcast",
    "validate",
    "with_edges",
    "without_edges",
]
