import { writeSync } from 'node:fs';

/** Where a line goes: the function's stdout (logs, metrics) or its stderr (warnings and errors). */
export type OutputStream = 'stdout' | 'stderr';

const DESCRIPTORS: Record<OutputStream, number> = { stdout: 1, stderr: 2 };

/** Streams that have been handed a line: from then on every line goes through them, in order. */
const throughStream: Record<OutputStream, boolean> = { stdout: false, stderr: false };

/**
 * Writes one line of the function's output (a JSON log entry, an EMF metric document) to stdout or
 * stderr themselves, not through console: on Lambda the runtime wraps console output in records of
 * its own, and CloudWatch extracts metrics only from lines that are EMF documents. Whatever else
 * writes lines to the same stdout in the process (the local API's access log) writes them here too,
 * so that lines never interleave.
 *
 * To the file descriptor, synchronously, rather than with `process.stdout.write`: the first use of
 * `process.stdout` builds its stream (a socket over the pipe), which measured 1.7 ms of every cold
 * start, the ColdStart metric line's (createPet's time to first response 1.2 % lower in paired
 * runs); the floors `npm run bench` compares with write nothing. Where the descriptor is a
 * non-blocking pipe that is full (the stream was opened, which makes it non-blocking, and the
 * reader is slow), the rest of the line goes through the stream, which queues it, and so does every
 * later line: a direct write would overtake the queue.
 */
export function writeLine(stream: OutputStream, line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  if (throughStream[stream]) {
    process[stream].write(bytes);
    return;
  }
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(DESCRIPTORS[stream], bytes, written);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    throughStream[stream] = true;
    process[stream].write(bytes.subarray(written));
  }
}
