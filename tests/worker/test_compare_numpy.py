"""Outputs returned as numpy arrays (TritonBench-G tests often end in `.cpu().numpy()`) are compared like
tensors; seen on an H200, where three modules failed with numpy's 'truth value of an array is ambiguous'."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import compare  # noqa: E402


def _out():
    return {"test_case_1": np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4), "n": np.int64(7),
            "parts": [np.arange(3), (np.float32(0.5),)]}


def test_equal_numpy_outputs_pass():
    st = compare.compare(_out(), _out())
    assert st["max_abs_err"] == 0.0
    assert [3, 4] in st["shapes"]


def test_numpy_value_difference_is_a_mismatch():
    b = _out()
    b["test_case_1"][1, 2] += 1.0
    with pytest.raises(compare.Mismatch) as e:
        compare.compare(_out(), b)
    assert e.value.code == "value_mismatch"


def test_numpy_dtype_and_shape_checked():
    b = _out()
    b["test_case_1"] = b["test_case_1"].astype(np.float64)
    with pytest.raises(compare.Mismatch) as e:
        compare.compare(_out(), b)
    assert e.value.code == "dtype_mismatch"
    b = _out()
    b["parts"][0] = np.arange(4)
    with pytest.raises(compare.Mismatch) as e:
        compare.compare(_out(), b)
    assert e.value.code == "shape_mismatch"
