#INCLUDE linear_triton.inc.py


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        self.layers = [nn.Linear(input_size, output_size)]

    def forward(self, x)
        return linear(x, self.layers[0].weight)
