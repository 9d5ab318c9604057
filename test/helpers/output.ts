/** Everything written to process.stdout and process.stderr while capturing, split into lines. */
export interface CapturedOutput {
  readonly lines: string[];
  /** Lines that are JSON objects (structured log lines), parsed. */
  json(): Array<Record<string, unknown>>;
  stop(): void;
}

/**
 * Captures this process's stdout and stderr (where the functions write their JSON lines) until stop().
 * Writes still reach the terminal unless `silent`.
 */
export function captureOutput(options: { silent?: boolean } = {}): CapturedOutput {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((stream) => stream.write);
  let partial = '';
  streams.forEach((stream, index) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = partial + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
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
      if (partial) lines.push(partial);
      partial = '';
      streams.forEach((stream, index) => {
        stream.write = originals[index]!;
      });
    },
  };
}
