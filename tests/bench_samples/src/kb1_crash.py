#INCLUDE relu_triton.inc.py


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("CUDA error: an illegal memory access was encountered (simulated)")
