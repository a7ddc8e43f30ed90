"""What every benchmark here times with: a session's options, and medians of calls
interleaved run by run, so that the machine's drift hits them all alike."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def session_options(threads: int = 1, profile_prefix: str | None = None):
    """onnxruntime's options for a timed session: `threads` intra-op threads (0: every
    core), one inter-op, sequential; its profiler on where `profile_prefix` is given."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return options


def interleaved_medians(
    calls: list[Callable[[], object]],
    warmup: int,
    runs: int,
    warm_runs: int = 0,
    shuffled: bool = False,
) -> list[float]:
    """Median seconds per call of each, timed one after the other run by run after a
    warm-up, each timed call after `warm_runs` untimed ones of itself; `shuffled`: in
    another order each run (seeded), so that none always follows the same other call."""
    for _ in range(warmup):
        for call in calls:
            call()
    times = [[] for _ in calls]
    order = np.random.default_rng(0)
    for _ in range(runs):
        pairs = list(zip(calls, times, strict=True))
        if shuffled:
            pairs = [pairs[i] for i in order.permutation(len(pairs))]
        for call, spent in pairs:
            for _ in range(warm_runs):
                call()
            start = time.perf_counter()
            call()
            spent.append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]
