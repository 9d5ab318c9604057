import { writeSync } from 'node:fs';
import { OUTPUT_DESTINATION } from './output-destination.mjs';

/** Where a line goes: the function's stdout (logs, metrics) or its stderr (warnings and errors). */
export type OutputStream = 'stdout' | 'stderr';

/** Where a runner wants the lines instead: it receives each one without its newline. */
export type OutputDestination = (stream: OutputStream, line: string) => void;

const DESCRIPTORS: Record<OutputStream, number> = { stdout: 1, stderr: 2 };

/** Streams that have been handed a line: from then on every line goes through them, in order. */
const throughStream: Record<OutputStream, boolean> = { stdout: false, stderr: false };

/**
 * Writes one line of the function's output (a JSON log entry, an EMF metric document) to stdout or
 * stderr themselves, not through console: on Lambda the runtime wraps console output in records of
 * its own, and CloudWatch extracts metrics only from lines that are EMF documents. Whatever else in
 * the process writes lines (the local API's access log) writes them here too, so lines never interleave.
 *
 * A runner that wants the lines elsewhere (the local runtime's function instances, the bench, a
 * test) sets a destination on globalThis under OUTPUT_DESTINATION (./output-destination.mjs) before
 * it loads the function; on Lambda there is none.
 */
export function writeLine(stream: OutputStream, line: string): void {
  const destination = (globalThis as { [OUTPUT_DESTINATION]?: OutputDestination })[OUTPUT_DESTINATION];
  if (destination === undefined) writeToDescriptor(stream, line);
  else destination(stream, line);
}

/**
 * To the file descriptor, synchronously: the first use of `process.stdout` builds its stream, a cost
 * every cold start would pay. Where the descriptor is a full non-blocking pipe (opening the stream
 * made it non-blocking, and the reader is slow), the rest of the line goes through the stream, which
 * queues it, and so does every later line: a direct write would overtake the queue.
 */
function writeToDescriptor(stream: OutputStream, line: string): void {
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
