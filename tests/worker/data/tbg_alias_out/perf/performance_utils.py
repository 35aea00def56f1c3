class Performance_Metrics:
    """The base of a perf harness, as kiln's TritonBench support uses it: an op name and input_tensors."""

    def __init__(self, op_name, dtype=None, is_backward=False, **kwargs):
        self.op_name = op_name
        self.dtype = dtype
        self.kwargs = kwargs
        self.input_tensors = []
