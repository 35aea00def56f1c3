# task: relu
# gpu-only: true
# mode: time
# expect: rejected timed_output_mismatch
# tries: sees the CUDA-graph capture that times short kernels (torch.cuda.is_current_stream_capturing) and
#        then launches only a token kernel, returning the output it computed on the same input memory
#        before the capture: its Python return value is right, the timed graph does no real work.
#        Honest when not captured, so it passes the check stage; under the interpreter nothing is captured.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def triton_relu(x, out):
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


_last = {}
_token = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = x.data_ptr()
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing() and key in _last:
            if key not in _token:
                _token[key] = torch.empty(1, device=x.device, dtype=x.dtype)
            triton_relu(x[:1].reshape(-1)[:1], _token[key])   # one program on one element: the "work"
            return _last[key]
        out = triton_relu(x, torch.empty_like(x))
        _last[key] = out
        return out
