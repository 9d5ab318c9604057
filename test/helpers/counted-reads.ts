import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A file whose readers are counted: see serveCountingReads. */
export interface CountedFile {
  /** How many times a process has opened the file to read it so far. */
  reads(): number;
  /** Stops serving it; a reader still waiting then reads an empty file. */
  close(): Promise<void>;
}

const POLL_MS = 2;

/**
 * Puts at `path` a named pipe that gives every process opening it to read `content`, and counts them: how a test
 * tells whether a bundle read a file, with no seam in the bundle. Nothing here waits on the pipe: a write end opened
 * non-blocking exists only while someone is reading, so polling for one finds each reader.
 */
export function serveCountingReads(path: string, content: Uint8Array): CountedFile {
  execFileSync('mkfifo', [path]);
  let reads = 0;
  let serving = true;
  const served = (async () => {
    while (serving) {
      const fd = openWriteEnd(path);
      if (fd === undefined) {
        await sleep(POLL_MS);
        continue;
      }
      reads++;
      try {
        await writeAll(fd, content, () => serving);
      } finally {
        closeSync(fd);
      }
      // The reader holds the pipe until it has read to the end: the next reader is another open.
      while (serving && readerStillThere(path)) await sleep(POLL_MS);
    }
  })();
  return {
    reads: () => reads,
    async close() {
      serving = false;
      await served;
    },
  };
}

/** The pipe's write end, or undefined while no process has it open to read. */
function openWriteEnd(path: string): number | undefined {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return undefined;
    throw error;
  }
}

function readerStillThere(path: string): boolean {
  const fd = openWriteEnd(path);
  if (fd === undefined) return false;
  closeSync(fd);
  return true;
}

/** Writes everything, waiting whenever the pipe is full until the reader has taken some. */
async function writeAll(fd: number, content: Uint8Array, going: () => boolean): Promise<void> {
  let written = 0;
  while (written < content.length && going()) {
    try {
      written += writeSync(fd, content, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await sleep(POLL_MS);
    }
  }
}
