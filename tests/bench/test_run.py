"""The benchmark harness runs, and its cases compute what their baselines compute.

No timing is asserted here: speed is measured by `make bench`, never by tests.
"""

import json
import sys

import cases as CASES
import numpy as np
import pytest
import run as RUN


@pytest.mark.parametrize("index", range(len(CASES.all_cases(np.random.default_rng(0), quick=True))))
def test_each_quick_case_matches_its_baselines(index):
    case = CASES.all_cases(np.random.default_rng(0), quick=True)[index]
    result = RUN.run_case(case, warmup=0, runs=1)
    assert [b["baseline"] for b in result["baselines"]] == [b.name for b in case.baselines]
    for b in result["baselines"]:
        assert b["max_rel_diff"] <= 1e-3 and b["tool_value"] > 0 and b["baseline_value"] > 0


@pytest.mark.slow
def test_harness_writes_its_json(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["run.py", "--quick", "--runs", "1", "--out", str(tmp_path)])
    RUN.main()
    data = json.loads((tmp_path / "results.json").read_text())
    # + the large model (time, memory) and the large graph
    n_cases = len(CASES.all_cases(np.random.default_rng(0), quick=True)) + 3
    assert data["meta"]["quick"] and len(data["results"]) == n_cases
    assert all("ratio" in b for r in data["results"] for b in r["baselines"])
