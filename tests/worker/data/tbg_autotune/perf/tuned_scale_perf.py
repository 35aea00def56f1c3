import torch

from TritonBench_v1.tuned_scale import tuned_scale
from performance_utils import Performance_Metrics


class performance_metrics(Performance_Metrics):
    """Two sizes, two autotune keys."""

    def __init__(self, dtype=None, is_backward=False, **kwargs):
        super().__init__("tuned_scale", dtype=dtype, is_backward=is_backward, **kwargs)

    def get_input_tensors(self):
        self.input_tensors = [torch.rand(256), torch.rand(512)]

    def to_cuda(self, input_tensor):
        return input_tensor

    def call_op(self, input_tensor):
        return tuned_scale(input_tensor)
