import { interceptOutput } from '../../local/output-interception.mjs';

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
 * where the functions write their JSON lines (src/runtime/output.ts). Writes still reach the terminal
 * unless `silent`.
 */
export function captureOutput(options: { silent?: boolean } = {}): CapturedOutput {
  const lines: string[] = [];
  const byStream = { stdout: [] as string[], stderr: [] as string[] };
  const partial = { stdout: '', stderr: '' };
  const restore = interceptOutput(
    (stream, bytes) => {
      const parts = (partial[stream] + Buffer.from(bytes).toString('utf8')).split('\n');
      partial[stream] = parts.pop() ?? '';
      lines.push(...parts);
      byStream[stream].push(...parts);
    },
    { swallow: options.silent ?? false },
  );
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
      restore();
    },
  };
}
