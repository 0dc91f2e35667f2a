#!/usr/bin/python3
"""Writes the PyTorch fixtures of pstrain's ONNX import tests.

Each model is defined in PyTorch 1.13 (Debian's python3-torch), exported with
torch.onnx.export at its defaults (opset 14) and a dynamic batch axis, and
run on a fixed input. For each NAME this writes, beside this script:

  NAME.onnx             the exported graph
  NAME.reference        PyTorch's tensors for it (format below)

and, alone: relu_mlp.onnx, the built-in MLP's shapes, which the training
benchmark (bench/compute/training_benchmark.cc) trains both ways; and
tiny_clicks.onnx, a click model small enough (under 4 KB) to seed the
loader's fuzz target (tests/fuzz/corpus/onnx_graph/tiny_clicks_pytorch);
and elementwise_external.onnx with elementwise_external.onnx.data, the
elementwise fixture saved by onnx.save_model with every tensor in the data
file, as graphs over 2 GB are kept (its reference is elementwise's).

A model over categorical ids (clicks) takes an int64 input; its reference
holds the ids as floats (exact below 2^24).

The reference holds the input x, the output y, a fixed random r, and the
gradients of L = sum(y * r) with respect to every parameter (grad/<name>,
named as the ONNX initializer) and to y (which is r). A test feeds r as
d(loss)/d(output) to pstrain's backward pass and compares.

Format: records until the end of the file, each
  uint32 name length, name (UTF-8), uint32 rank, int64 dims[rank],
  float32 values (little-endian, row-major).

Run from anywhere: /usr/bin/python3 common/model/onnx/testdata/make_fixtures.py
(the tests need no PyTorch; the files are committed).
"""

import os
import struct

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 5


class Mlp(torch.nn.Module):
    """784 -> 128 ReLU -> 64 GELU (exported as the Erf pattern) -> 10."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Flatten(),
            torch.nn.Linear(784, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 64), torch.nn.GELU(),
            torch.nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


class ElementwiseNet(torch.nn.Module):
    """Sigmoid, Tanh, LeakyReLU, Add/Sub/Mul/Div by tensors and constants,
    MatMul with a parameter, and a Dropout that is inactive in eval. (An
    expression of parameters alone, such as scale + 1, would be folded by
    the exporter into a frozen initializer of its own.)"""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(12, 6) * 0.3)
        self.scale = torch.nn.Parameter(torch.rand(6) + 0.5)
        self.shift = torch.nn.Parameter(torch.randn(6) * 0.1)
        self.dropout = torch.nn.Dropout(0.5)
        self.out = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.matmul(x, self.w)
        h = torch.tanh(h) * self.scale - self.shift
        h = torch.nn.functional.leaky_relu(h, 0.1)
        h = h / (torch.sigmoid(h) + 1.0)
        h = torch.sigmoid(h) - 0.5
        return self.out(self.dropout(h))


class Cnn(torch.nn.Module):
    """A small image classifier for 28x28 grey images: two 3x3 convolutions,
    each with ReLU, the first followed by max pooling and the second by
    average pooling, then a linear layer over the flattened maps."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AvgPool2d(2),
            torch.nn.Flatten(),
            torch.nn.Linear(32 * 7 * 7, 10))

    def forward(self, x):
        return self.net(x)


class SpatialNet(torch.nn.Module):
    """What the CNN leaves out: a non-square kernel with strides, dilation
    and uneven padding, padded max and average pooling (padding left out of
    the average), a convolution without bias, global average pooling and a
    transpose."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0),
                                     dilation=(1, 2))
        self.pool1 = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.pool2 = torch.nn.AvgPool2d(2, stride=1, padding=1, count_include_pad=False)
        self.conv2 = torch.nn.Conv2d(4, 6, 2, bias=False)
        self.out = torch.nn.Linear(6 * 3 * 4 + 6, 3)

    def forward(self, x):
        h = torch.relu(self.conv1(x))
        h = self.pool2(self.pool1(h))
        h = torch.tanh(self.conv2(h))
        pooled = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
        moved = h.permute(0, 2, 3, 1).flatten(1)
        return self.out(torch.cat([moved, pooled], dim=1))


class Clicks(torch.nn.Module):
    """A click-through model for pstrain's synthetic click logs: one id per
    field, 8 fields of 1000 ids each (field f's ids in [1000 f, 1000 f +
    1000)). Every id has a row of one embedding table (nn.Embedding,
    exported as a Gather on the table); the fields' rows, side by side,
    feed an MLP that gives one click logit. The rows start small, as
    click-through models' usually do: from PyTorch's default, N(0, 1), the
    MLP first sees mostly noise (2,000 steps of 128 on 100,000 click logs,
    Adam 0.002: AUC 0.73; from N(0, 0.1), 0.77, as logistic regression)."""

    FIELDS = 8
    VOCABULARY_PER_FIELD = 1000

    def __init__(self, dim=8):
        super().__init__()
        self.embedding = torch.nn.Embedding(self.FIELDS * self.VOCABULARY_PER_FIELD, dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(self.FIELDS * dim, 32), torch.nn.ReLU(),
            torch.nn.Linear(32, 1))
        torch.nn.init.normal_(self.embedding.weight, std=0.1)

    def forward(self, ids):
        return self.mlp(self.embedding(ids).flatten(1))

    @classmethod
    def example_ids(cls, batch):
        offsets = torch.arange(cls.FIELDS) * cls.VOCABULARY_PER_FIELD
        return torch.randint(0, cls.VOCABULARY_PER_FIELD, (batch, cls.FIELDS)) + offsets


class TinyClicks(torch.nn.Module):
    """Clicks' shape in miniature: 2 fields, a table of 12 rows of 3."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(12, 3)
        self.out = torch.nn.Linear(2 * 3, 1)

    def forward(self, ids):
        return self.out(self.embedding(ids).flatten(1))


def write_reference(path, tensors):
    with open(path, 'wb') as out:
        for name, value in tensors:
            data = value.detach().contiguous().to(torch.float32).numpy()
            encoded = name.encode('utf-8')
            out.write(struct.pack('<I', len(encoded)))
            out.write(encoded)
            out.write(struct.pack('<I', data.ndim))
            out.write(struct.pack('<%dq' % data.ndim, *data.shape))
            out.write(data.astype('<f4').tobytes())


def export(name, model, x, outputs=('y',)):
    axes = {output: {0: 'batch'} for output in ('x',) + tuple(outputs)}
    torch.onnx.export(model, x, os.path.join(HERE, name + '.onnx'),
                      input_names=['x'], output_names=list(outputs), dynamic_axes=axes)


def make(name, model, example_shape, outputs=('y',), x=None):
    """The reference is of the first output, y. `x`: the input, when not
    drawn from a normal distribution of `example_shape`."""
    model.eval()
    if x is None:
        x = torch.randn(BATCH, *example_shape)
    export(name, model, x, outputs)
    y = model(x)
    if isinstance(y, tuple):
        y = y[0]
    r = torch.randn(y.shape)
    model.zero_grad()
    (y * r).sum().backward()
    tensors = [('x', x), ('y', y), ('r', r)]
    for param_name, param in model.named_parameters():
        tensors.append(('grad/' + param_name, param.grad))
    write_reference(os.path.join(HERE, name + '.reference'), tensors)


class TwoOutputs(torch.nn.Module):
    """Class scores y and, beside them, the hidden features (as a model kept
    for its embeddings gives): a job names y as the output it trains."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(8, 6)
        self.out = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        return self.out(h), torch.sigmoid(h) * 2


class ReluMlp(torch.nn.Module):
    """The built-in MLP's shapes (hidden_units [256, 128], ReLU), for the
    benchmark that compares the two: exported only, no reference."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(784, 256), torch.nn.ReLU(),
            torch.nn.Linear(256, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


def save_with_external_data(name, source):
    """Writes the fixture SOURCE again as NAME.onnx, its tensors (initializers
    and Constant values alike) in NAME.onnx.data."""
    data = name + '.onnx.data'
    if os.path.exists(os.path.join(HERE, data)):
        os.remove(os.path.join(HERE, data))  # onnx appends to it
    model = onnx.load(os.path.join(HERE, source + '.onnx'))
    onnx.save_model(model, os.path.join(HERE, name + '.onnx'),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=0)


def main():
    torch.manual_seed(20261126)
    make('mlp', Mlp(), [784])
    make('elementwise', ElementwiseNet(), [12])
    make('cnn', Cnn(), [1, 28, 28])
    make('spatial', SpatialNet(), [3, 9, 10])
    export('relu_mlp', ReluMlp().eval(), torch.randn(1, 784))
    make('two_outputs', TwoOutputs(), [8], outputs=('y', 'features'))
    make('clicks', Clicks(), None, x=Clicks.example_ids(BATCH))
    export('tiny_clicks', TinyClicks().eval(), torch.tensor([[1, 7]]))
    save_with_external_data('elementwise_external', 'elementwise')


if __name__ == '__main__':
    main()
