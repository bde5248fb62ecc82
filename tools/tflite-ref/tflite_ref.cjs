#!/usr/bin/env node
// Runs a .tflite model in TensorFlow Lite itself -- the WebAssembly build of the TFLite interpreter
// that the npm package @tensorflow/tfjs-tflite ships -- on inputs given as .npy files, and saves
// each output as a .npy. It is Sable's independent reference for imported models
// (scripts/compare-tflite.sh, docs/tflite.md).
//
//   node tflite_ref.cjs --modules DIR MODEL.tflite --input IN.npy [--input IN2.npy ...] --out-dir DIR
//
// --modules is the folder holding node_modules/ from tools/tflite-ref/package.json (npm ci there:
// scripts/setup-deps.sh --tflite-ref). Writes DIR/output0.npy, output1.npy, ... in the model's
// output order with TFLite's own output types, and prints one line per tensor.
//
// The package is built for browsers: it loads its Emscripten glue with importScripts (in a worker)
// or a <script> element, and the .wasm with fetch. Under Node the loader takes its worker path, so
// this file provides `self`, `importScripts` (reading the glue from disk into the global scope) and
// a `fetch` that answers the .wasm from disk. Threads are off: the feature probe is run once with
// SharedArrayBuffer hidden, so the loader picks the single-threaded SIMD build (no Worker needed),
// and the interpreter gets numThreads 1. Profiling is on, to print which kernels ran (TFLite applies
// its XNNPACK delegate by default; the operators it does not take run on TFLite's own kernels).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const { createRequire } = require('module');

function usage(message) {
  process.stderr.write(`tflite_ref: ${message}\n` +
    'usage: node tflite_ref.cjs --modules DIR MODEL.tflite --input IN.npy [--input ...] --out-dir DIR\n');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { inputs: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--modules') args.modules = value();
    else if (a === '--input') args.inputs.push(value());
    else if (a === '--out-dir') args.outDir = value();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (args.model === undefined) args.model = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!args.modules) usage('--modules DIR is required');
  if (!args.model) usage('no MODEL.tflite');
  if (!args.outDir) usage('--out-dir DIR is required');
  return args;
}

// NumPy .npy (format 1, 2 or 3), little-endian, C order. TFLite type name <-> NumPy descr.
const kDescr = {
  uint8: '|u1', int8: '|i1', bool: '|b1', int16: '<i2', int32: '<i4', uint32: '<u4',
  float32: '<f4', float64: '<f8', int64: '<i8',
};

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`'${file}' is not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(`'${file}': cannot read the .npy header ${header.trim()}`);
  if (order[1] !== 'False') throw new Error(`'${file}' is in Fortran order`);
  return {
    descr: descr[1],
    shape: shape[1].split(',').map(s => s.trim()).filter(s => s.length > 0).map(Number),
    data: bytes.subarray(start + headerLength),
  };
}

function npyBytes(descr, shape, data) {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

// TFLite's int64 tensors are not readable through the package's tensor API (their data() is 0), and
// ARG_MAX/ARG_MIN write int64 class indices by default (DeepLab's output). For each such model
// output this patches, in a copy of the file, the tensor's type and the operator's `output_type`
// to INT32 in place (both are stored scalars of the FlatBuffer): the same kernel then writes the
// same indices as int32 (what Sable's import makes of them too, docs/tflite.md). Any other int64
// output is an error. Returns the names of the patched tensors.
const kTensorTypeInt32 = 2, kTensorTypeInt64 = 4, kArgMax = 56, kArgMin = 79;
function int64OutputsToInt32(bytes) {
  const u32 = (p) => bytes.readUInt32LE(p);
  const field = (table, id) => {
    const vtable = table - bytes.readInt32LE(table);
    const offset = id * 2 + 4 < bytes.readUInt16LE(vtable) ? bytes.readUInt16LE(vtable + 4 + id * 2) : 0;
    return offset ? table + offset : null;
  };
  const vector = (table, id) => {
    const p = field(table, id);
    if (p === null) return { at: 0, length: 0 };
    const v = p + u32(p);
    return { at: v + 4, length: u32(v) };
  };
  const tableAt = (v, i) => v.at + 4 * i + u32(v.at + 4 * i);
  const root = u32(0);
  const codes = vector(root, 1);
  const builtin = (i) => {
    const code = tableAt(codes, i);
    const deprecated = field(code, 0), current = field(code, 3);
    return Math.max(deprecated === null ? 0 : bytes.readInt8(deprecated), current === null ? 0 : bytes.readInt32LE(current));
  };
  const subgraph = tableAt(vector(root, 2), 0);
  const tensors = vector(subgraph, 0), outputs = vector(subgraph, 2), operators = vector(subgraph, 3);
  const patched = [];
  for (let j = 0; j < outputs.length; ++j) {
    const index = bytes.readInt32LE(outputs.at + 4 * j);
    const tensor = tableAt(tensors, index);
    const type = field(tensor, 1);
    if (type === null || bytes[type] !== kTensorTypeInt64) continue;
    const nameField = field(tensor, 3);
    const name = nameField === null ? `tensor ${index}` : bytes.toString('utf8', nameField + u32(nameField) + 4,
      nameField + u32(nameField) + 4 + u32(nameField + u32(nameField)));
    let producer = null;
    for (let k = 0; k < operators.length && producer === null; ++k) {
      const op = tableAt(operators, k);
      const outs = vector(op, 2);
      for (let o = 0; o < outs.length; ++o) if (bytes.readInt32LE(outs.at + 4 * o) === index) producer = op;
    }
    const opcode = producer === null ? -1 : builtin(field(producer, 0) === null ? 0 : u32(field(producer, 0)));
    const optionsField = producer === null ? null : field(producer, 4);
    const outputType = optionsField === null ? null : field(optionsField + u32(optionsField), 0);
    if ((opcode !== kArgMax && opcode !== kArgMin) || outputType === null || bytes[outputType] !== kTensorTypeInt64)
      throw new Error(`output ${j} '${name}' is int64, which the package cannot read (only ARG_MAX/ARG_MIN ones are rewritten to int32)`);
    bytes[type] = kTensorTypeInt32;
    bytes[outputType] = kTensorTypeInt32;
    patched.push(name);
  }
  return patched;
}

// The browser pieces the package's loader reaches for (see the header comment).
function installBrowserShims(wasmDir) {
  globalThis.self = globalThis;
  globalThis.location = { origin: '', href: '' };
  globalThis.importScripts = (url) => vm.runInThisContext(fs.readFileSync(url, 'utf8'), { filename: url });
  globalThis.fetch = async (url) => {
    const file = String(url);
    if (!file.startsWith(wasmDir) || !file.endsWith('.wasm')) throw new Error(`tflite_ref: unexpected fetch of '${file}'`);
    return new Response(fs.readFileSync(file), { headers: { 'Content-Type': 'application/wasm' } });
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const modules = path.resolve(args.modules);
  const requireFrom = createRequire(path.join(modules, 'package.json'));
  let tflite;
  try {
    requireFrom.resolve('@tensorflow/tfjs-tflite');
  } catch (e) {
    process.stderr.write(`tflite_ref: @tensorflow/tfjs-tflite is not installed under '${modules}' ` +
      '(scripts/setup-deps.sh --tflite-ref installs it)\n');
    process.exit(3);
  }
  const packageDir = path.dirname(requireFrom.resolve('@tensorflow/tfjs-tflite/package.json'));
  const wasmDir = path.join(packageDir, 'wasm') + '/';
  installBrowserShims(wasmDir);
  tflite = requireFrom('@tensorflow/tfjs-tflite');
  const version = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
  tflite.setWasmPath(wasmDir);
  const sharedArrayBuffer = globalThis.SharedArrayBuffer;
  delete globalThis.SharedArrayBuffer;
  const features = await tflite.getWasmFeatures();  // cached by the package for the load below
  globalThis.SharedArrayBuffer = sharedArrayBuffer;
  if (features.multiThreading) throw new Error('the single-threaded build was not selected');

  const modelBytes = fs.readFileSync(args.model);
  const patched = int64OutputsToInt32(modelBytes);
  const buffer = modelBytes.buffer.slice(modelBytes.byteOffset, modelBytes.byteOffset + modelBytes.byteLength);
  const model = await tflite.loadTFLiteModel(buffer, { numThreads: 1, enableProfiling: true });
  const runner = model.modelRunner;  // the interpreter's tensors, without tfjs tensor conversions
  const inputs = runner.getInputs();
  const outputs = runner.getOutputs();
  console.log(`runtime: @tensorflow/tfjs-tflite ${version} (TFLite interpreter, WebAssembly${features.simd ? ' SIMD' : ''}, 1 thread)`);
  for (const name of patched) console.log(`note: output '${name}' read as int32 (ARG_MAX/ARG_MIN output_type INT64 -> INT32)`);
  if (args.inputs.length !== inputs.length)
    usage(`the model has ${inputs.length} inputs, ${args.inputs.length} --input given`);
  for (let k = 0; k < inputs.length; ++k) {
    const info = inputs[k];
    const array = readNpy(args.inputs[k]);
    const shape = info.shape.split(',').map(Number);
    const want = kDescr[info.dataType];
    if (array.descr !== want)
      throw new Error(`'${args.inputs[k]}' is ${array.descr}, input ${k} '${info.name}' is ${info.dataType} (${want})`);
    const target = info.data();
    if (array.data.length !== target.byteLength || shape.reduce((a, b) => a * b, 1) !== array.shape.reduce((a, b) => a * b, 1))
      throw new Error(`'${args.inputs[k]}' has shape [${array.shape}], input ${k} '${info.name}' is [${shape}]`);
    new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(array.data);
    console.log(`input ${k}: ${info.name} ${info.dataType} [${shape}] <- ${args.inputs[k]}`);
  }
  const start = process.hrtime.bigint();
  if (!runner.infer()) throw new Error('TFLite inference failed');
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // Which kernels ran: TFLite's own (by operator) and the XNNPACK delegate's partitions.
  const kernels = new Map();
  for (const item of runner.getProfilingResults()) kernels.set(item.nodeType, (kernels.get(item.nodeType) || 0) + 1);
  console.log(`kernels: ${[...kernels].map(([type, n]) => `${type}×${n}`).join(' ')}`);
  fs.mkdirSync(args.outDir, { recursive: true });
  for (let j = 0; j < outputs.length; ++j) {
    const info = outputs[j];
    const data = info.data();
    const descr = kDescr[info.dataType];
    if (!descr) throw new Error(`output ${j} '${info.name}' has the type ${info.dataType}, which has no NumPy dtype here`);
    const file = path.join(args.outDir, `output${j}.npy`);
    fs.writeFileSync(file, npyBytes(descr, info.shape.split(',').map(Number), data));
    console.log(`output ${j}: ${info.name} ${info.dataType} [${info.shape}] -> ${file}`);
  }
  console.log(`time: invoke ${ms.toFixed(1)} ms`);
}

main().catch((e) => {
  process.stderr.write(`tflite_ref: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
