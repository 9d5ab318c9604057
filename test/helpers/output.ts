import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

/** Everything written to stdout and stderr while capturing, split into lines. */
export interface CapturedOutput {
  readonly lines: string[];
  /** The same lines by where they were written. */
  readonly byStream: { readonly stdout: string[]; readonly stderr: string[] };
  /** Lines that are JSON objects (structured log lines), parsed. */
  json(): Array<Record<string, unknown>>;
  stop(): void;
}

/**
 * Captures this process's stdout and stderr until stop(): the streams, and file descriptors 1 and 2,
 * where the functions write their JSON lines (shared/output.ts). Writes still reach the terminal
 * unless `silent`.
 */
export function captureOutput(options: { silent?: boolean } = {}): CapturedOutput {
  const lines: string[] = [];
  const byStream = { stdout: [] as string[], stderr: [] as string[] };
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((stream) => stream.write);
  const originalWriteSync = fs.writeSync;
  const partial = { stdout: '', stderr: '' };
  const record = (stream: 'stdout' | 'stderr', chunk: string | Uint8Array) => {
    const text = partial[stream] + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const parts = text.split('\n');
    partial[stream] = parts.pop() ?? '';
    lines.push(...parts);
    byStream[stream].push(...parts);
  };
  // Node's documented way to patch a built-in for ES module importers as well.
  fs.writeSync = ((fd: number, buffer: string | NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    if (fd !== 1 && fd !== 2) return (originalWriteSync as (...args: unknown[]) => number)(fd, buffer, ...rest);
    const offset = typeof rest[0] === 'number' ? rest[0] : 0;
    const bytes = typeof buffer === 'string' ? Buffer.from(buffer) : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).subarray(offset);
    record(fd === 1 ? 'stdout' : 'stderr', bytes);
    // Passed on through the stream, which queues what a full pipe cannot take yet.
    if (!options.silent) originals[fd - 1]!.call(streams[fd - 1], bytes);
    return bytes.length;
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  streams.forEach((stream, index) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      record(index === 0 ? 'stdout' : 'stderr', chunk);
      if (options.silent) {
        const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
        callback?.();
        return true;
      }
      return (originals[index] as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  });
  return {
    lines,
    byStream,
    json() {
      return lines.flatMap((line) => {
        if (!line.trimStart().startsWith('{')) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
    },
    stop() {
      for (const stream of ['stdout', 'stderr'] as const) {
        if (partial[stream]) {
          lines.push(partial[stream]);
          byStream[stream].push(partial[stream]);
        }
        partial[stream] = '';
      }
      streams.forEach((stream, index) => {
        stream.write = originals[index]!;
      });
      fs.writeSync = originalWriteSync;
      syncBuiltinESMExports();
    },
  };
}
