// Loaded with `--import` into a process the soak measures (tools/bench/soak.ts), and by inheritance
// into each of its worker threads, so that the soak reads every thread's V8 heap without any hook
// in the code it measures and whatever the number of function instances. The main thread answers
// the soak over the IPC channel; the other threads answer the main thread on a BroadcastChannel.
// Plain JavaScript: the workers load it before anything could compile it.
import { getHeapSpaceStatistics } from 'node:v8';
import { BroadcastChannel, isMainThread, threadId, workerData } from 'node:worker_threads';

/**
 * How long the main thread waits for the other threads' answers: a worker answers between two
 * invocations, which on a busy machine can be a while; it does not know how many there are.
 */
const ANSWER_WINDOW_MS = 1_500;

const channel = new BroadcastChannel('soak-probe');
const name = isMainThread ? 'main' : (workerData?.functionName ?? `worker ${threadId}`);

/**
 * Collections run before a read (with --expose-gc): `full`, so that heapUsed is what is live;
 * `release`, the last-resort one, which also hands the heap pages V8 keeps for reuse back to the system.
 */
const COLLECTIONS = {
  full: () => globalThis.gc?.(),
  release: () => globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' }),
};

/** This thread's V8 heap, after the given collection if any. */
function readHeap(collection) {
  COLLECTIONS[collection]?.();
  const usage = process.memoryUsage();
  // The young generation is sized by the allocation rate, the old one by what survives: which of the two holds the committed memory.
  const youngCommitted = getHeapSpaceStatistics()
    .filter(({ space_name }) => space_name.startsWith('new_'))
    .reduce((total, space) => total + space.space_size, 0);
  return {
    threadId,
    name,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    youngCommitted,
  };
}

if (!isMainThread) {
  channel.onmessage = ({ data }) => {
    if (data.type === 'read') channel.postMessage({ type: 'heap', read: data.read, heap: readHeap(data.collection) });
  };
} else if (process.send) {
  process.channel?.unref();
  let reads = 0;
  const answers = new Map();
  channel.onmessage = ({ data }) => {
    if (data.type === 'heap') answers.get(data.read)?.push(data.heap);
  };
  process.on('message', (message) => {
    if (message?.type !== 'soak-read') return;
    const read = ++reads;
    const threads = [];
    answers.set(read, threads);
    channel.postMessage({ type: 'read', read, collection: message.collection });
    const main = readHeap(message.collection);
    setTimeout(() => {
      answers.delete(read);
      process.send({ type: 'soak-read', id: message.id, threads: [main, ...threads] });
    }, ANSWER_WINDOW_MS).unref();
  });
}
// Last: listening may take a reference, and the probe must never keep a thread alive.
channel.unref();
