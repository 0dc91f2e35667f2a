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

Models of several inputs (dlrm, multi_hot) write each input as a record
named input/<graph input name> instead of x (ids, again, as floats), and
y, r and grad/<name> as the others. Their fixtures: dlrm, a small DLRM
(dense features and one id per field); multi_hot, bags of several ids per
example as PyTorch users write them with nn.Embedding (a weighted sum, a
mean over the real ids, a plain mean); embedding_bag, nn.EmbeddingBag
(exported as a Loop), exported only (no reference), for the loader's
refusal. And, alone: ../../../../examples/onnx/dlrm.onnx (the fixture
name example_dlrm), the same DLRM at the sizes of the reference Criteo
Kaggle model, exported only.

Each of these new fixtures seeds PyTorch's generator itself, so that it can
be remade alone; the fixtures before them share one stream, in order.

The reference holds the input x, the output y, a fixed random r, and the
gradients of L = sum(y * r) with respect to every parameter (grad/<name>,
named as the ONNX initializer) and to y (which is r). A test feeds r as
d(loss)/d(output) to pstrain's backward pass and compares.

Format: records until the end of the file, each
  uint32 name length, name (UTF-8), uint32 rank, int64 dims[rank],
  float32 values (little-endian, row-major).

Run from anywhere: /usr/bin/python3 common/model/onnx/testdata/make_fixtures.py
[NAME...] (the tests need no PyTorch; the files are committed). With names,
only those fixtures are written (the others of the shared stream are drawn,
not written, so that the named ones come out as in a whole run); without,
all of them. A rerun writes the same bytes.
"""

import os
import struct
import sys

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, '..', '..', '..', '..', 'examples', 'onnx')
BATCH = 5
# The fixtures to write (names), or None for all.
SELECTED = None


def selected(name):
    return SELECTED is None or name in SELECTED


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
    if not selected(name):
        return
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
    if selected(name):
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


class Dlrm(torch.nn.Module):
    """DLRM as its reference implementation defines it: a bottom MLP over
    the dense features (ReLU after every layer), one embedding table per
    categorical field, the dot products of every pair among the bottom
    MLP's output and the fields' rows, and a top MLP over [bottom output,
    dot products] that gives one click logit.

    Field k's row is self.tables[k](ids[:, k]): the export selects the
    field with a Gather along axis 1 of a constant index, then Gathers the
    table. The dot products: T = stack([x] + rows) [batch, F + 1, dim],
    Z = T T^T, flattened to [batch, (F + 1)^2], and the strict lower
    triangle selected with index_select of a constant index (a Gather along
    axis 1, not advanced indexing, which exports as a GatherND of computed
    indices).

    `table_std`: the tables' initial rows from N(0, table_std^2), when not
    PyTorch's N(0, 1). The reference sizes (example_dlrm) start them small:
    a job reads the tables as dynamic ones, rows made for each id it sees
    from the distribution of the file's rows, and dot products of rows of
    std 1 and dimension 16 would swamp the top MLP's input at the start (a
    variance of 16 each), where small ones let it learn the bottom MLP and
    the rows first, as DLRM's own uniform(+-1/sqrt(rows)) start does for
    large tables."""

    def __init__(self, dense=13, fields=4, rows=10, dim=4, bottom=(8, 4), top=(8,),
                 table_std=None):
        super().__init__()
        assert bottom[-1] == dim, 'the bottom MLP ends at the embedding dim'
        layers = []
        width = dense
        for units in bottom:
            layers += [torch.nn.Linear(width, units), torch.nn.ReLU()]
            width = units
        self.bottom = torch.nn.Sequential(*layers)
        self.tables = torch.nn.ModuleList(
            [torch.nn.Embedding(rows, dim) for _ in range(fields)])
        if table_std is not None:
            for table in self.tables:
                torch.nn.init.normal_(table.weight, std=table_std)
        n = fields + 1
        self.tri = [i * n + j for i in range(n) for j in range(i)]
        layers = []
        width = dim + len(self.tri)
        for units in top:
            layers += [torch.nn.Linear(width, units), torch.nn.ReLU()]
            width = units
        layers.append(torch.nn.Linear(width, 1))
        self.top = torch.nn.Sequential(*layers)

    def forward(self, dense_x, ids):
        x = self.bottom(dense_x)
        rows = [self.tables[k](ids[:, k]) for k in range(len(self.tables))]
        t = torch.stack([x] + rows, dim=1)
        z = torch.bmm(t, t.transpose(1, 2)).flatten(1)
        tri = torch.tensor(self.tri, dtype=torch.int64)
        zi = torch.index_select(z, 1, tri)
        return self.top(torch.cat([x, zi], dim=1))


class MultiHot(torch.nn.Module):
    """Bags of ids, 5 a example, as PyTorch users write them with
    nn.Embedding: a weighted sum over table a, a mean over the real ids of
    table b (the weighted sum divided by the count), and a plain mean over
    a (for bags of a fixed length), beside the dense features, through a
    linear layer to one logit. Weights are 1 for a real id and 0 for the
    padding (the example's own last id, repeated)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Embedding(20, 4)
        self.b = torch.nn.Embedding(20, 4)
        self.out = torch.nn.Linear(3 + 3 * 4, 1)

    def forward(self, dense_x, ids, weights, counts):
        w = weights.unsqueeze(-1)
        weighted_sum = (self.a(ids) * w).sum(1)
        mean = (self.b(ids) * w).sum(1) / counts
        plain_mean = self.a(ids).mean(1)
        return self.out(torch.cat([dense_x, weighted_sum, mean, plain_mean], dim=1))

    @staticmethod
    def example_inputs():
        lengths = [5, 3, 1, 4, 2]
        ids = torch.randint(0, 20, (len(lengths), 5))
        weights = torch.zeros(len(lengths), 5)
        for i, length in enumerate(lengths):
            ids[i, length:] = ids[i, length - 1]
            weights[i, :length] = 1
        counts = torch.tensor(lengths, dtype=torch.float32).unsqueeze(1)
        return torch.randn(len(lengths), 3), ids, weights, counts


class EmbeddingBagClicks(torch.nn.Module):
    """nn.EmbeddingBag (sum) over ids in one flat list and each bag's offset
    into it, then one logit."""

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(20, 4, mode='sum')
        self.out = torch.nn.Linear(4, 1)

    def forward(self, ids, offsets):
        return self.out(self.bag(ids, offsets))


def export_inputs(path, model, inputs, names, axes):
    torch.onnx.export(model, tuple(inputs), path, input_names=list(names),
                      output_names=['y'], dynamic_axes=axes)


def make_inputs(name, seed, model_fn, inputs_fn):
    """A fixture of several inputs, its reference's inputs named
    input/<name>; the generator seeded with `seed` first."""
    if not selected(name):
        return
    torch.manual_seed(seed)
    model = model_fn().eval()
    inputs = inputs_fn()  # [(graph input name, tensor)]
    names = [n for n, _ in inputs]
    values = [v for _, v in inputs]
    axes = {n: {0: 'batch'} for n in names + ['y']}
    export_inputs(os.path.join(HERE, name + '.onnx'), model, values, names, axes)
    y = model(*values)
    r = torch.randn(y.shape)
    model.zero_grad()
    (y * r).sum().backward()
    tensors = [('input/' + n, v) for n, v in inputs] + [('y', y), ('r', r)]
    for param_name, param in model.named_parameters():
        tensors.append(('grad/' + param_name, param.grad))
    write_reference(os.path.join(HERE, name + '.reference'), tensors)


def make_dlrm():
    make_inputs('dlrm', 41, Dlrm, lambda: [('dense_x', torch.randn(BATCH, 13)),
                                           ('ids', torch.randint(0, 10, (BATCH, 4)))])


def make_multi_hot():
    def inputs():
        dense_x, ids, weights, counts = MultiHot.example_inputs()
        return [('dense_x', dense_x), ('ids', ids), ('weights', weights), ('counts', counts)]
    make_inputs('multi_hot', 42, MultiHot, inputs)


def make_embedding_bag():
    if not selected('embedding_bag'):
        return
    torch.manual_seed(43)
    ids = torch.tensor([1, 7, 3, 19, 4, 4])
    offsets = torch.tensor([0, 2, 5])
    export_inputs(os.path.join(HERE, 'embedding_bag.onnx'), EmbeddingBagClicks().eval(),
                  [ids, offsets], ['ids', 'offsets'],
                  {'ids': {0: 'ids'}, 'offsets': {0: 'batch'}, 'y': {0: 'batch'}})


# Enough rows that the job's estimate of their spread (a dynamic table's
# rows are drawn from N(mean, std) of the file's) is within a few percent.
ROWS_LIKE_BUILTIN = 64


def start_like_builtin_dlrm(model):
    """Starts the linear layers as pstrain's built-in dlrm does (Glorot
    uniform weights, zero biases), where PyTorch's default is uniform within
    1/sqrt(fan in) for both; the tables' N(0, 0.05^2 / 3) has the spread of
    the built-in's uniform rows in [-0.05, 0.05). So the two DLRMs differ in
    their random draws alone, and a job of each reaches the same AUC."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(module.weight)
            torch.nn.init.zeros_(module.bias)


def make_example_dlrm():
    """examples/onnx/dlrm.onnx: 13 dense features, 26 fields, rows of 16,
    bottom MLP 13-512-256-64-16, top MLP 512-256-1, as the reference DLRM
    for Criteo's Kaggle data, started as the built-in dlrm is; tables of 64
    rows (a job makes them dynamic)."""
    if not selected('example_dlrm'):
        return
    torch.manual_seed(44)
    model = Dlrm(dense=13, fields=26, rows=ROWS_LIKE_BUILTIN, dim=16,
                 bottom=(512, 256, 64, 16), top=(512, 256), table_std=0.05 / 3 ** 0.5)
    start_like_builtin_dlrm(model)
    model.eval()
    export_inputs(os.path.join(EXAMPLES, 'dlrm.onnx'), model,
                  [torch.randn(2, 13), torch.randint(0, ROWS_LIKE_BUILTIN, (2, 26))], ['dense_x', 'ids'],
                  {'dense_x': {0: 'batch'}, 'ids': {0: 'batch'}, 'y': {0: 'batch'}})


NEW_FIXTURES = {
    'dlrm': make_dlrm,
    'multi_hot': make_multi_hot,
    'embedding_bag': make_embedding_bag,
    'example_dlrm': make_example_dlrm,
}
OLD_FIXTURES = ['mlp', 'elementwise', 'cnn', 'spatial', 'relu_mlp', 'two_outputs', 'clicks',
                'tiny_clicks', 'elementwise_external']


def main():
    global SELECTED
    if len(sys.argv) > 1:
        SELECTED = set(sys.argv[1:])
        unknown = SELECTED - set(OLD_FIXTURES) - set(NEW_FIXTURES)
        if unknown:
            sys.exit('make_fixtures.py: no fixture named %s; the fixtures: %s' % (
                ', '.join(sorted(unknown)), ', '.join(OLD_FIXTURES + list(NEW_FIXTURES))))
    torch.manual_seed(20261126)
    make('mlp', Mlp(), [784])
    make('elementwise', ElementwiseNet(), [12])
    make('cnn', Cnn(), [1, 28, 28])
    make('spatial', SpatialNet(), [3, 9, 10])
    export('relu_mlp', ReluMlp().eval(), torch.randn(1, 784))
    make('two_outputs', TwoOutputs(), [8], outputs=('y', 'features'))
    make('clicks', Clicks(), None, x=Clicks.example_ids(BATCH))
    export('tiny_clicks', TinyClicks().eval(), torch.tensor([[1, 7]]))
    if selected('elementwise_external'):
        save_with_external_data('elementwise_external', 'elementwise')
    for make_fixture in NEW_FIXTURES.values():
        make_fixture()


if __name__ == '__main__':
    main()
