// Runs an ONNX model in ONNX Runtime (onnxruntime-node, CPU) on tensors kept
// in files, so that C++ tests can compare pstrain's results with a real
// runtime's.
//
//   node run_onnx_model.js MODEL_ONNX IN_DIR OUT_DIR [ROWS_PER_RUN]
//
// Every graph input NAME is read from IN_DIR/NAME.f32 or IN_DIR/NAME.i64
// (raw little-endian float32 / int64, row-major) with its dims in
// IN_DIR/NAME.shape (one line, separated by spaces). All inputs share dim 0,
// the batch; the model runs on at most ROWS_PER_RUN rows (default 1000) at a
// time and each output is concatenated along dim 0 into OUT_DIR/NAME.f32 or
// OUT_DIR/NAME.i64 plus OUT_DIR/NAME.shape. Any error prints one line naming
// what is wrong on stderr and exits with code 1.
//
// onnxruntime-node is found through NODE_PATH (the C++ side points it at the
// runfiles' node_modules) or the usual lookup next to this file.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const kDefaultRowsPerRun = 1000;
// Element types this script moves across, by file suffix.
const kTypes = {
  f32: {name: 'float32', bytes: 4, array: Float32Array},
  i64: {name: 'int64', bytes: 8, array: BigInt64Array},
};

class UsageError extends Error {}

function parseArgs(argv) {
  if (argv.length < 3 || argv.length > 4) {
    throw new UsageError('usage: node run_onnx_model.js MODEL_ONNX IN_DIR OUT_DIR [ROWS_PER_RUN]');
  }
  const [model, inDir, outDir, rowsText] = argv;
  let rowsPerRun = kDefaultRowsPerRun;
  if (rowsText !== undefined) {
    rowsPerRun = Number(rowsText);
    if (!Number.isSafeInteger(rowsPerRun) || rowsPerRun <= 0) {
      throw new UsageError(`ROWS_PER_RUN must be a positive integer, not "${rowsText}"`);
    }
  }
  return {model, inDir, outDir, rowsPerRun};
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (error) {
    throw new Error(
        `cannot load onnxruntime-node (NODE_PATH=${process.env.NODE_PATH || ''}; ` +
        `run scripts/setup.sh): ${error.message}`);
  }
}

function parseShape(file) {
  const text = fs.readFileSync(file, 'utf8').trim();
  if (text === '') return [];
  return text.split(/\s+/).map((word) => {
    if (!/^\d+$/.test(word))
      throw new Error(`${file}: dim "${word}" is not a non-negative integer`);
    return Number(word);
  });
}

function elementCount(dims) {
  return dims.reduce((product, dim) => product * dim, 1);
}

// Reads graph input `name` from IN_DIR: {type, dims, data}.
function readInput(inDir, name) {
  const suffixes =
      Object.keys(kTypes).filter((s) => fs.existsSync(path.join(inDir, `${name}.${s}`)));
  if (suffixes.length === 0) {
    throw new Error(
        `graph input "${name}" has no file: expected ${path.join(inDir, name)}.f32 or .i64`);
  }
  if (suffixes.length > 1) {
    throw new Error(`graph input "${name}" has both ${name}.f32 and ${name}.i64 in ${inDir}`);
  }
  const type = kTypes[suffixes[0]];
  const dataFile = path.join(inDir, `${name}.${suffixes[0]}`);
  const shapeFile = path.join(inDir, `${name}.shape`);
  if (!fs.existsSync(shapeFile))
    throw new Error(`graph input "${name}" has no shape file ${shapeFile}`);
  const dims = parseShape(shapeFile);
  if (dims.length === 0)
    throw new Error(`graph input "${name}" is a scalar; every input needs dim 0, the batch`);
  const bytes = fs.readFileSync(dataFile);
  const expected = elementCount(dims) * type.bytes;
  if (bytes.length !== expected) {
    throw new Error(
        `${dataFile} has ${bytes.length} bytes but shape [${dims.join(', ')}] ` +
        `of ${type.name} needs ${expected}`);
  }
  // A copy, so the typed array is aligned whatever the Buffer's offset.
  const data = new type.array(elementCount(dims));
  Buffer.from(data.buffer).set(bytes);
  return {type, dims, data};
}

// Files in IN_DIR that name no graph input are a caller's typo; say so
// instead of silently ignoring them.
function checkNoStrayInputs(inDir, inputNames) {
  if (!fs.existsSync(inDir) || !fs.statSync(inDir).isDirectory()) {
    throw new Error(`input folder ${inDir} does not exist`);
  }
  for (const file of fs.readdirSync(inDir)) {
    if (!file.endsWith('.shape')) continue;
    const name = file.slice(0, -'.shape'.length);
    if (!inputNames.includes(name)) {
      throw new Error(
          `${path.join(inDir, file)}: "${name}" is not a graph input ` +
          `(the model's inputs: ${inputNames.join(', ')})`);
    }
  }
}

function batchSize(inputs) {
  const names = Object.keys(inputs);
  const rows = names.length === 0 ? 0 : inputs[names[0]].dims[0];
  for (const name of names) {
    if (inputs[name].dims[0] !== rows) {
      throw new Error(
          `inputs disagree on dim 0 (the batch): "${names[0]}" has ${rows} rows, ` +
          `"${name}" has ${inputs[name].dims[0]}`);
    }
  }
  return rows;
}

// Rows [begin, end) of every input as ONNX Runtime tensors.
function sliceFeeds(ort, inputs, begin, end) {
  const feeds = {};
  for (const [name, input] of Object.entries(inputs)) {
    const rowSize = elementCount(input.dims.slice(1));
    const data = input.data.slice(begin * rowSize, end * rowSize);
    feeds[name] = new ort.Tensor(input.type.name, data, [end - begin, ...input.dims.slice(1)]);
  }
  return feeds;
}

function suffixOf(outputName, tensorType) {
  if (outputName.includes('/') || outputName === '.' || outputName === '..') {
    throw new Error(`graph output "${outputName}" cannot be written as a file name`);
  }
  const suffix = Object.keys(kTypes).find((s) => kTypes[s].name === tensorType);
  if (suffix === undefined) {
    throw new Error(
        `graph output "${outputName}" is ${tensorType}; only float32 and int64 are supported`);
  }
  return suffix;
}

// Appends one run's outputs to `collected` (name -> {suffix, tail, parts, rows}).
function collect(collected, results) {
  for (const [name, tensor] of Object.entries(results)) {
    const suffix = suffixOf(name, tensor.type);
    if (tensor.dims.length === 0)
      throw new Error(`graph output "${name}" is a scalar; cannot concatenate along dim 0`);
    const tail = tensor.dims.slice(1);
    const entry = collected[name] || (collected[name] = {suffix, tail, parts: [], rows: 0});
    if (entry.tail.join(' ') !== tail.join(' ')) {
      throw new Error(`graph output "${name}" changes shape between runs: [${entry.tail}] then [${
          tail}] after dim 0`);
    }
    entry.parts.push(tensor.data);
    entry.rows += tensor.dims[0];
  }
}

function writeOutputs(outDir, collected) {
  fs.mkdirSync(outDir, {recursive: true});
  for (const [name, entry] of Object.entries(collected)) {
    const type = kTypes[entry.suffix];
    const total = entry.parts.reduce((sum, part) => sum + part.length, 0);
    const data = new type.array(total);
    let offset = 0;
    for (const part of entry.parts) {
      data.set(part, offset);
      offset += part.length;
    }
    fs.writeFileSync(
        path.join(outDir, `${name}.${entry.suffix}`),
        Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    fs.writeFileSync(
        path.join(outDir, `${name}.shape`), [entry.rows, ...entry.tail].join(' ') + '\n');
  }
}

async function createSession(ort, model) {
  if (!fs.existsSync(model)) throw new Error(`model file ${model} does not exist`);
  try {
    return await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
  } catch (error) {
    throw new Error(`cannot load model ${model}: ${error.message}`);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  // Typed arrays use the host's byte order; the files are little-endian.
  if (os.endianness() !== 'LE') throw new Error('this script needs a little-endian host');
  const ort = loadOrt();
  const session = await createSession(ort, args.model);
  checkNoStrayInputs(args.inDir, session.inputNames);
  const inputs = {};
  for (const name of session.inputNames) inputs[name] = readInput(args.inDir, name);
  const rows = batchSize(inputs);
  const collected = {};
  // One run even for an empty batch, so outputs still get their shapes.
  for (let begin = 0; begin === 0 || begin < rows; begin += args.rowsPerRun) {
    const end = Math.min(rows, begin + args.rowsPerRun);
    let results;
    try {
      results = await session.run(sliceFeeds(ort, inputs, begin, end));
    } catch (error) {
      throw new Error(`running ${args.model} on rows [${begin}, ${end}) failed: ${error.message}`);
    }
    collect(collected, results);
  }
  for (const name of session.outputNames) {
    if (!(name in collected)) throw new Error(`graph output "${name}" was not produced`);
  }
  writeOutputs(args.outDir, collected);
  await session.release();
}

main().catch((error) => {
  process.stderr.write(`run_onnx_model: ${error.message}\n`);
  process.exit(1);
});
