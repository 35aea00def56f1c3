import torch

from TritonBench_v1.fill_valid import fill_valid
from performance_utils import Performance_Metrics

BIG = 4_500_000   # 18 MB of float32: past kiln's 16 MiB clone limit, the candidate runs on the master inputs


class performance_metrics(Performance_Metrics):
    """call_op returns the buffer the kernel writes (an input). perf_0: large, nothing written; perf_1: large,
    2048 elements written; perf_2: small, nothing written."""

    def __init__(self, dtype=None, is_backward=False, **kwargs):
        super().__init__("fill_valid", dtype=dtype, is_backward=is_backward, **kwargs)

    def get_input_tensors(self):
        self.input_tensors = [(torch.rand(4096), torch.rand(BIG), 0), (torch.rand(4096), torch.rand(BIG), 2048),
                              (torch.rand(4096), torch.rand(4096), 0)]

    def to_cuda(self, input_tensor):
        return input_tensor

    def call_op(self, input_tensor):
        x, o, n_valid = input_tensor
        fill_valid(x, o, n_valid)
        return o
