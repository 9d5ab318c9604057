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
 * Writes one line of the function's output to stdout or stderr, not through console: Lambda wraps
 * console output in records of its own, and CloudWatch extracts metrics only from bare EMF lines. A
 * runner may redirect the lines through OUTPUT_DESTINATION.
 */
export function writeLine(stream: OutputStream, line: string): void {
  const destination = (globalThis as { [OUTPUT_DESTINATION]?: OutputDestination })[OUTPUT_DESTINATION];
  if (destination === undefined) writeToDescriptor(stream, line);
  else destination(stream, line);
}

/**
 * To the file descriptor, synchronously, sparing every cold start the building of `process.stdout`. On a
 * full non-blocking pipe the line and every later one go through the stream instead, lest a direct write overtake its queue.
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
