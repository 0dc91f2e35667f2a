// Serves a pstrain export with ONNX Runtime: classifies the Fashion-MNIST
// test images with the export's model.onnx and prints the accuracy, which
// equals what `pstrain predict` prints for the same export.
//
//   npm install onnxruntime-node    # ONNXRUNTIME_NODE_INSTALL_CUDA=skip: CPU only
//   node serve_fashion_mnist.js /tmp/fmnist-model/model.onnx \
//       /usr/share/datasets/fashion-mnist
//
// The model's input "dense" is float32 [batch, 784]: each image's pixels in
// row-major order scaled to [0, 1], as pstrain read them in training. Its
// output "predictions" is float32 [batch, 10]: class probabilities.

const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

// pstrain scales each pixel byte by float32(1 / 255); doing the same here
// gives ONNX Runtime bit-identical inputs.
const SCALE = Math.fround(1 / 255);

// An IDX file's items after its header (4 bytes of magic, 4 per dimension).
function readIdx(file) {
  const bytes = zlib.gunzipSync(fs.readFileSync(file));
  const dims = bytes[3];
  return bytes.subarray(4 + 4 * dims);
}

async function main() {
  const [modelPath, dataDir] = process.argv.slice(2);
  if (!modelPath || !dataDir) {
    console.error('usage: node serve_fashion_mnist.js MODEL_ONNX FASHION_MNIST_DIR');
    process.exit(2);
  }
  const pixels = readIdx(path.join(dataDir, 't10k-images-idx3-ubyte.gz'));
  const labels = readIdx(path.join(dataDir, 't10k-labels-idx1-ubyte.gz'));
  const session = await ort.InferenceSession.create(modelPath);
  const batch = 1000;
  let correct = 0;
  for (let start = 0; start < labels.length; start += batch) {
    const n = Math.min(batch, labels.length - start);
    const dense =
        Float32Array.from(pixels.subarray(start * 784, (start + n) * 784), (p) => p * SCALE);
    const {predictions} = await session.run({dense: new ort.Tensor('float32', dense, [n, 784])});
    for (let i = 0; i < n; i++) {
      const scores = predictions.data.subarray(i * 10, (i + 1) * 10);
      const predicted = scores.indexOf(Math.max(...scores));
      if (predicted === labels[start + i]) correct++;
    }
  }
  console.log(`${labels.length} examples: accuracy ${(correct / labels.length).toFixed(4)}`);
}

main().catch((error) => {
  console.error(`serve_fashion_mnist: ${error.message}`);
  process.exit(1);
});
