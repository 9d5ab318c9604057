// One function instance of the local runtime (local/functions.ts), in a worker thread of its own as
// a Lambda instance has a sandbox of its own: its own environment (the Worker's `env`), module
// instance and SDK clients. It imports the bundle, answers invocations, and forwards everything the
// function writes to stdout and stderr to the runtime, ahead of the answer it belongs with.
// Plain JavaScript: Node loads it in the worker with nothing compiled.
import { parentPort, workerData } from 'node:worker_threads';
import { createLambdaContext } from './lambda-context.mjs';
import { interceptOutput } from './output-interception.mjs';

const { bundleUrl, functionName, timeoutMs } = workerData;

// The functions write their lines straight to file descriptors 1 and 2 (src/runtime/output.ts); a
// worker shares them with the whole process, so every write becomes a message, in order.
interceptOutput((stream, bytes) => parentPort.postMessage({ type: 'output', stream, text: Buffer.from(bytes).toString('utf8') }), {
  swallow: true,
});

let handler;
try {
  handler = (await import(bundleUrl)).handler;
  if (typeof handler !== 'function') throw new Error(`${functionName} does not export a handler`);
  parentPort.postMessage({ type: 'ready' });
} catch (error) {
  parentPort.postMessage({ type: 'failed', error: describe(error) });
}

parentPort.on('message', async ({ id, event }) => {
  const context = createLambdaContext({
    functionName,
    memoryLimitInMB: 256,
    timeoutMs,
    awsRequestId: crypto.randomUUID(),
    logStreamName: 'local',
    region: 'local',
    accountId: '000000000000',
  });
  try {
    parentPort.postMessage({ type: 'result', id, result: await handler(event, context) });
  } catch (error) {
    parentPort.postMessage({ type: 'error', id, error: describe(error) });
  }
});

function describe(error) {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error) };
}
