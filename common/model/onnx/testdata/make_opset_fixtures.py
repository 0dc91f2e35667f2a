#!/usr/bin/python3
"""Writes the opset fixtures of pstrain's ONNX import tests.

Today's PyTorch exporter writes opset 18 and up, where some ops changed
form (Pad takes its axes as an input from 18, AveragePool takes dilations
from 19, Gelu is an op from 20, 21 widens types only). These graphs are
written here with the onnx package's helpers (Debian's python3-onnx 1.12),
no PyTorch needed: make_opsetid writes any opset number, even one its
checker does not know, so the checker is not run on them. ONNX Runtime is
the reference for their forward values (tests/onnx/onnx_opset_parity_test.cc)
and a numerical check for their backward passes
(common/model/onnx/onnx_opset_test.cc). For each NAME this writes, beside
this script, NAME.onnx:

  opset18   MatMul, Reshape, Pad with an axes input and a constant_value
            (a Constant node, as PyTorch writes one; a float initializer
            would be a weight to train),
            LayerNormalization over the last axis, Flatten, Gemm.
  opset19   Reshape to images, Conv, AveragePool with dilations, Pad of
            opset 13's form (pads of every dim, no axes), BatchNormalization
            in inference form, Relu, Flatten, Gemm.
  opset20   Gemm, Gelu (exact), BatchNormalization over [batch, channels],
            Gemm, Gelu (tanh), Gemm.
  opset21   a Reshape whose shape Shape, Gather, Unsqueeze and Concat
            compute from the batch, Transpose, Unsqueeze, Pad of two axes
            with its constant_value left out (an empty input before the
            axes), Flatten, LayerNormalization without B, MatMul, Identity.
  split13   Split by a split input, and in equal parts (opset 13's forms).
  split18   Split by num_outputs (opset 18's form; the last part smaller),
            and LayerNormalization whose Mean and InvStdDev outputs feed
            the next layer.
  norms_mnist  a Fashion-MNIST classifier, 784 -> 8 -> 10, with
            BatchNormalization (inference form) and LayerNormalization
            between its layers, which a test trains.
  reduce13  the reductions in opset 13's forms: ReduceSum's axes an input,
            ReduceMean's, ReduceMax's and ReduceLogSumExp's an attribute;
            Squeeze with its axes as an input.
  reduce18  every reduction in opset 18's form, axes an input: ReduceMean,
            ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
            ReduceLogSum, ReduceLogSumExp, ReduceSum, and ReduceMax with
            no axes and noop_with_empty_axes (it passes its input on).
  norms17   LayerNormalization (opset 17's op) with epsilon 1e-3, and
            BatchNormalization without training_mode, as PyTorch 1.13
            writes them in eval mode.

Each takes float x [batch, features] and gives float y [batch, width]; the
weights are fixed random values (numpy's seed 0); BatchNormalization's mean
and var are initializers only it reads (statistics, which pstrain does not
train).

Run from anywhere: /usr/bin/python3 common/model/onnx/testdata/make_opset_fixtures.py
(the tests need no Python; the files are committed).
"""

import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(0)


def weight(name, *dims, scale=0.4):
    values = (RNG.standard_normal(dims) * scale).astype(np.float32)
    return numpy_helper.from_array(values, name)


def positive(name, *dims):
    values = RNG.uniform(0.5, 2.0, dims).astype(np.float32)
    return numpy_helper.from_array(values, name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def save(name, opset, features, width, nodes, initializers):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', features])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', width])],
        initializers)
    model = helper.make_model(graph, producer_name='make_opset_fixtures.py',
                              opset_imports=[helper.make_opsetid('', opset)])
    # The IR version of the ONNX release that introduced the opset.
    model.ir_version = {13: 7, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}[opset]
    save_model(model, os.path.join(HERE, name + '.onnx'))


def batch_norm(prefix, x, out, channels):
    """BatchNormalization in inference form and its initializers."""
    node = helper.make_node(
        'BatchNormalization',
        [x, prefix + '.weight', prefix + '.bias', prefix + '.running_mean',
         prefix + '.running_var'], [out], name=prefix, epsilon=1e-5, momentum=0.9)
    tensors = [positive(prefix + '.weight', channels), weight(prefix + '.bias', channels),
               weight(prefix + '.running_mean', channels, scale=0.5),
               positive(prefix + '.running_var', channels)]
    return node, tensors


def opset18():
    nodes = [
        helper.make_node('Constant', [], ['pad_value'], name='pad_value',
                         value=floats('pad_value', 0.5)),
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='matmul'),
        helper.make_node('Reshape', ['h', 'shape'], ['r'], name='reshape'),
        helper.make_node('Pad', ['r', 'pads', 'pad_value', 'pad_axes'], ['p'], name='pad'),
        helper.make_node('LayerNormalization', ['p', 'ln.weight', 'ln.bias'], ['n'],
                         name='layer_norm', axis=-1),
        helper.make_node('Flatten', ['n'], ['f'], name='flatten'),
        helper.make_node('Gemm', ['f', 'w2', 'b2'], ['y'], name='gemm'),
    ]
    initializers = [
        weight('w1', 12, 16), ints('shape', [-1, 2, 8]), ints('pads', [1, 2]),
        ints('pad_axes', [-1]),
        positive('ln.weight', 11), weight('ln.bias', 11), weight('w2', 22, 3), weight('b2', 3),
    ]
    save('opset18', 18, 12, 3, nodes, initializers)


def opset19():
    bn, bn_tensors = batch_norm('bn', 'p', 'b', 3)
    nodes = [
        helper.make_node('Reshape', ['x', 'shape'], ['images'], name='reshape'),
        helper.make_node('Conv', ['images', 'conv.weight', 'conv.bias'], ['c'], name='conv',
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node('AveragePool', ['c'], ['a'], name='pool', kernel_shape=[2, 2],
                         dilations=[2, 2], strides=[1, 1]),
        helper.make_node('Pad', ['a', 'pads'], ['p'], name='pad'),
        bn,
        helper.make_node('Relu', ['b'], ['r'], name='relu'),
        helper.make_node('Flatten', ['r'], ['f'], name='flatten'),
        helper.make_node('Gemm', ['f', 'fc.weight', 'fc.bias'], ['y'], name='fc', transB=1),
    ]
    initializers = [
        ints('shape', [-1, 2, 6, 6]), weight('conv.weight', 3, 2, 3, 3),
        weight('conv.bias', 3), ints('pads', [0, 0, 1, 1, 0, 0, 1, 1]),
        weight('fc.weight', 4, 108, scale=0.1), weight('fc.bias', 4),
    ] + bn_tensors
    save('opset19', 19, 72, 4, nodes, initializers)


def opset20():
    bn, bn_tensors = batch_norm('bn', 'h1', 'n1', 16)
    nodes = [
        helper.make_node('Gemm', ['x', 'w1', 'b1'], ['z1'], name='gemm1'),
        helper.make_node('Gelu', ['z1'], ['h1'], name='gelu'),
        bn,
        helper.make_node('Gemm', ['n1', 'w2', 'b2'], ['z2'], name='gemm2'),
        helper.make_node('Gelu', ['z2'], ['h2'], name='gelu_tanh', approximate='tanh'),
        helper.make_node('Gemm', ['h2', 'w3', 'b3'], ['y'], name='gemm3'),
    ]
    initializers = [
        weight('w1', 10, 16), weight('b1', 16), weight('w2', 16, 8), weight('b2', 8),
        weight('w3', 8, 2), weight('b3', 2),
    ] + bn_tensors
    save('opset20', 20, 10, 2, nodes, initializers)


def opset21():
    nodes = [
        helper.make_node('Shape', ['x'], ['x_shape'], name='shape'),
        helper.make_node('Gather', ['x_shape', 'zero'], ['batch'], name='batch', axis=0),
        helper.make_node('Unsqueeze', ['batch', 'axis0'], ['batch_1'], name='batch_1'),
        helper.make_node('Concat', ['batch_1', 'rest'], ['target'], name='target', axis=0),
        helper.make_node('Reshape', ['x', 'target'], ['r'], name='reshape'),
        helper.make_node('Transpose', ['r'], ['t'], name='transpose', perm=[0, 2, 1]),
        helper.make_node('Unsqueeze', ['t', 'axis1'], ['u'], name='unsqueeze'),
        helper.make_node('Pad', ['u', 'pads', '', 'pad_axes'], ['p'], name='pad'),
        helper.make_node('Flatten', ['p'], ['f'], name='flatten'),
        helper.make_node('LayerNormalization', ['f', 'ln.weight'], ['n'], name='layer_norm',
                         axis=1, epsilon=1e-4),
        helper.make_node('MatMul', ['n', 'w'], ['m'], name='matmul'),
        helper.make_node('Identity', ['m'], ['y'], name='identity'),
    ]
    initializers = [
        ints('zero', 0), ints('axis0', [0]), ints('rest', [4, 6]), ints('axis1', [1]),
        ints('pads', [0, 1, 1, 0]), ints('pad_axes', [2, 3]),
        positive('ln.weight', 35), weight('w', 35, 3),
    ]
    save('opset21', 21, 24, 3, nodes, initializers)


def norms_mnist():
    bn, bn_tensors = batch_norm('bn', 'h', 'b', 8)
    nodes = [
        helper.make_node('Gemm', ['x', 'w1', 'b1'], ['h'], name='gemm1'),
        bn,
        helper.make_node('Relu', ['b'], ['r'], name='relu'),
        helper.make_node('LayerNormalization', ['r', 'ln.weight', 'ln.bias'], ['n'],
                         name='layer_norm'),
        helper.make_node('Gemm', ['n', 'w2', 'b2'], ['y'], name='gemm2'),
    ]
    initializers = [
        weight('w1', 784, 8, scale=0.05), weight('b1', 8), positive('ln.weight', 8),
        weight('ln.bias', 8), weight('w2', 8, 10), weight('b2', 10),
    ] + bn_tensors
    save('norms_mnist', 17, 784, 10, nodes, initializers)


def split13():
    nodes = [
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='matmul'),
        helper.make_node('Split', ['h', 'split'], ['a', 'b'], name='split', axis=1),
        helper.make_node('Split', ['b'], ['b1', 'b2'], name='halves', axis=-1),
        helper.make_node('Relu', ['a'], ['ra'], name='relu'),
        helper.make_node('Tanh', ['b1'], ['tb'], name='tanh'),
        helper.make_node('Concat', ['ra', 'tb', 'b2'], ['c'], name='concat', axis=1),
        helper.make_node('Gemm', ['c', 'w2', 'b2_bias'], ['y'], name='gemm'),
    ]
    initializers = [
        weight('w1', 12, 10), ints('split', [4, 6]), weight('w2', 10, 3),
        weight('b2_bias', 3),
    ]
    save('split13', 13, 12, 3, nodes, initializers)


def split18():
    nodes = [
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='matmul'),
        helper.make_node('Split', ['h'], ['a', 'b', 'c'], name='split', axis=1, num_outputs=3),
        helper.make_node('Relu', ['a'], ['ra'], name='relu'),
        helper.make_node('Sigmoid', ['c'], ['sc'], name='sigmoid'),
        helper.make_node('Concat', ['ra', 'b', 'sc'], ['j'], name='concat', axis=1),
        helper.make_node('LayerNormalization', ['j', 'ln.weight', 'ln.bias'],
                         ['n', 'mean', 'inv_std_dev'], name='layer_norm'),
        helper.make_node('Concat', ['n', 'mean', 'inv_std_dev'], ['k'], name='features',
                         axis=1),
        helper.make_node('Gemm', ['k', 'w2', 'b2'], ['y'], name='gemm'),
    ]
    initializers = [
        weight('w1', 12, 10), positive('ln.weight', 10), weight('ln.bias', 10),
        weight('w2', 12, 3), weight('b2', 3),
    ]
    save('split18', 18, 12, 3, nodes, initializers)


def reduce13():
    def reduce(op, out, **attributes):
        return helper.make_node(op, ['r'], [out], name=out, **attributes)
    nodes = [
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='matmul'),
        helper.make_node('Reshape', ['h', 'shape'], ['r'], name='reshape'),
        helper.make_node('ReduceSum', ['r', 'axis1'], ['sum'], name='sum', keepdims=0),
        reduce('ReduceMean', 'mean', axes=[2]),
        helper.make_node('Squeeze', ['mean', 'axis2'], ['mean_2d'], name='squeeze'),
        reduce('ReduceMax', 'max', axes=[1], keepdims=0),
        reduce('ReduceLogSumExp', 'log_sum_exp', axes=[-1], keepdims=0),
        helper.make_node('Concat', ['sum', 'mean_2d', 'max', 'log_sum_exp'], ['c'],
                         name='concat', axis=1),
        helper.make_node('Gemm', ['c', 'w2', 'b2'], ['y'], name='gemm'),
    ]
    initializers = [
        weight('w1', 24, 24, scale=0.3), ints('shape', [-1, 4, 6]), ints('axis1', [1]),
        ints('axis2', [2]), weight('w2', 20, 3), weight('b2', 3),
    ]
    save('reduce13', 13, 24, 3, nodes, initializers)


def reduce18():
    def reduce(op, out, axes, source='r', **attributes):
        return helper.make_node(op, [source, axes], [out], name=out, **attributes)
    reductions = [
        reduce('ReduceMean', 'mean', 'axis2'),
        helper.make_node('Squeeze', ['mean', 'axis2'], ['mean_2d'], name='squeeze'),
        reduce('ReduceMin', 'min', 'axis1', keepdims=0),
        reduce('ReduceProd', 'prod', 'axis1', keepdims=0),
        reduce('ReduceL1', 'l1', 'axis2', keepdims=0),
        reduce('ReduceL2', 'l2', 'axis2', keepdims=0),
        reduce('ReduceSumSquare', 'sum_square', 'axis1', keepdims=0),
        reduce('ReduceLogSum', 'log_sum', 'axis2', source='positive', keepdims=0),
        reduce('ReduceLogSumExp', 'log_sum_exp', 'axis2', keepdims=0),
        reduce('ReduceMax', 'same', 'no_axes', noop_with_empty_axes=1),
        helper.make_node('Flatten', ['same'], ['same_2d'], name='flatten'),
        reduce('ReduceSum', 'sum', 'axis2', keepdims=0),
    ]
    parts = ['mean_2d', 'min', 'prod', 'l1', 'l2', 'sum_square', 'log_sum', 'log_sum_exp',
             'same_2d', 'sum']
    nodes = [
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='matmul'),
        helper.make_node('Reshape', ['h', 'shape'], ['r'], name='reshape'),
        helper.make_node('Sigmoid', ['r'], ['positive'], name='sigmoid'),
    ] + reductions + [
        helper.make_node('Concat', parts, ['c'], name='concat', axis=1),
        helper.make_node('Gemm', ['c', 'w2', 'b2'], ['y'], name='gemm'),
    ]
    initializers = [
        weight('w1', 24, 24, scale=0.3), ints('shape', [-1, 4, 6]), ints('axis1', [1]),
        ints('axis2', [2]), ints('no_axes', []), weight('w2', 66, 3, scale=0.2), weight('b2', 3),
    ]
    save('reduce18', 18, 24, 3, nodes, initializers)


def norms17():
    bn, bn_tensors = batch_norm('bn', 'n', 'b', 16)
    nodes = [
        helper.make_node('Gemm', ['x', 'w1', 'b1'], ['h'], name='gemm1'),
        helper.make_node('LayerNormalization', ['h', 'ln.weight', 'ln.bias'], ['n'],
                         name='layer_norm', epsilon=1e-3),
        bn,
        helper.make_node('Tanh', ['b'], ['t'], name='tanh'),
        helper.make_node('Gemm', ['t', 'w2', 'b2'], ['y'], name='gemm2'),
    ]
    initializers = [
        weight('w1', 8, 16), weight('b1', 16), positive('ln.weight', 16),
        weight('ln.bias', 16), weight('w2', 16, 2), weight('b2', 2),
    ] + bn_tensors
    save('norms17', 17, 8, 2, nodes, initializers)


def main():
    opset18()
    opset19()
    opset20()
    opset21()
    norms17()
    reduce13()
    reduce18()
    norms_mnist()
    split13()
    split18()


if __name__ == '__main__':
    main()
