// One function instance of the local runtime (local/functions.ts), in a worker thread of its own as
// a Lambda instance has a sandbox of its own: its own environment (the Worker's `env`), module
// instance and SDK clients. It imports the bundle, answers invocations, and forwards everything the
// function writes to stdout and stderr to the runtime, ahead of the answer it belongs with.
// Plain JavaScript: Node loads it in the worker with nothing compiled.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { createLambdaContext } from './lambda-context.mjs';

const { bundleUrl, functionName, timeoutMs } = workerData;

function forward(stream, chunk) {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
  parentPort.postMessage({ type: 'output', stream, text });
}

// The functions write their lines straight to file descriptors 1 and 2 (shared/output.ts); a
// worker shares them with the whole process, so those writes become messages, in order.
const writeSync = fs.writeSync;
fs.writeSync = (fd, buffer, ...rest) => {
  if (fd !== 1 && fd !== 2) return writeSync(fd, buffer, ...rest);
  const offset = typeof buffer !== 'string' && typeof rest[0] === 'number' ? rest[0] : 0;
  const bytes = typeof buffer === 'string' ? Buffer.from(buffer) : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).subarray(offset);
  forward(fd === 1 ? 'stdout' : 'stderr', bytes);
  return bytes.length;
};
syncBuiltinESMExports();
for (const [name, stream] of [['stdout', process.stdout], ['stderr', process.stderr]]) {
  stream.write = (chunk, ...rest) => {
    forward(name, chunk);
    rest.find((argument) => typeof argument === 'function')?.();
    return true;
  };
}

let handler;
try {
  handler = (await import(bundleUrl)).handler;
  if (typeof handler !== 'function') throw new Error(`${functionName} does not export a handler`);
  parentPort.postMessage({ type: 'ready' });
} catch (error) {
  parentPort.postMessage({ type: 'failed', error: describe(error) });
}

parentPort.on('message', async ({ id, event }) => {
  const context = createLambdaContext({ functionName, memoryLimitInMB: 256, timeoutMs, awsRequestId: crypto.randomUUID(), logStreamName: 'local', region: 'local', accountId: '000000000000' });
  try {
    parentPort.postMessage({ type: 'result', id, result: await handler(event, context) });
  } catch (error) {
    parentPort.postMessage({ type: 'error', id, error: describe(error) });
  }
});

function describe(error) {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { name: 'Error', message: String(error) };
}
