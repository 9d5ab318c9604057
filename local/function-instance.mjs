// One function instance of the local runtime (local/functions.ts), in a worker thread of its own as a
// Lambda instance has its own sandbox. Everything the function writes reaches the runtime ahead of the
// answer it belongs with. Plain JavaScript: the worker loads it with nothing compiled.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { OUTPUT_DESTINATION } from '../shared/runtime/output-destination.mjs';
import { createLambdaContext } from './lambda-context.mjs';

const { bundleUrl, functionName, timeoutMs, memoryMiB } = workerData;

// The function's lines join its console output on this worker's own stdout and stderr, which the
// runtime reads (the Worker's `stdout` and `stderr` options): file descriptors 1 and 2 are the whole process's.
globalThis[OUTPUT_DESTINATION] = (stream, line) => process[stream].write(`${line}\n`);

// Stacks in the TypeScript sources: unlike on Lambda, here the developer reads every stack, and the map
// is inline in the bundle anyway.
process.setSourceMapsEnabled(true);

let handler;
try {
  handler = (await import(bundleUrl)).handler;
  if (typeof handler !== 'function') throw new Error(`${functionName} does not export a handler`);
  await outputRead();
  parentPort.postMessage({ type: 'ready' });
} catch (error) {
  // Lambda's runtime logs what a function's initialization threw (a configuration it refuses, a
  // module that does not load) in the function's log; the caller only gets a 500.
  logUncaught(error);
  await outputRead();
  parentPort.postMessage({ type: 'failed', error: describe(error) });
}

parentPort.on('message', async ({ id, event, requestId }) => {
  const context = createLambdaContext({
    functionName,
    memoryLimitInMB: memoryMiB,
    timeoutMs,
    // The runtime's, so that its START and REPORT lines name the request the function's lines carry.
    awsRequestId: requestId ?? crypto.randomUUID(),
    logStreamName: 'local',
    region: 'local',
    accountId: '000000000000',
  });
  try {
    const result = await handler(event, context);
    await outputRead();
    parentPort.postMessage({ type: 'result', id, result, memoryUsedBytes: memoryUsed() });
  } catch (error) {
    logUncaught(error, context.awsRequestId);
    await outputRead();
    parentPort.postMessage({ type: 'error', id, error: describe(error), memoryUsedBytes: memoryUsed() });
  }
});

/**
 * Settles once the runtime has read everything written so far. A worker's stdio travels on a channel
 * of its own, which messages would overtake; a write's callback runs when the reader asks for more.
 */
async function outputRead() {
  await Promise.all(
    [process.stdout, process.stderr].map((stream) =>
      stream.writableLength === 0 ? undefined : new Promise((resolve) => stream.write('', resolve)),
    ),
  );
}

/**
 * The memory this instance holds, for the REPORT line's Max Memory Used: its V8 heap and what the heap's
 * objects hold outside it. Lambda measures the sandbox; a worker's process is shared, its isolate is its own.
 */
function memoryUsed() {
  const heap = getHeapStatistics();
  return heap.total_heap_size + heap.external_memory;
}

/** Lambda's own line for an error the function threw: JSON, as the deployed functions' log format is. */
function logUncaught(error, requestId) {
  const { name, message, stack } = describe(error);
  const line = {
    timestamp: new Date().toISOString(),
    level: 'ERROR',
    requestId,
    errorType: name,
    errorMessage: message,
    stackTrace: stack?.split('\n'),
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

function describe(error) {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error) };
}
