import type { OutputDestination, OutputStream } from '../../shared/runtime/output';
import { OUTPUT_DESTINATION } from '../../shared/runtime/output-destination.mjs';

/** Everything written to stdout and stderr while capturing, split into lines. */
export interface CapturedOutput {
  readonly lines: string[];
  /** The same lines by where they were written. */
  readonly byStream: { readonly stdout: string[]; readonly stderr: string[] };
  /** Lines that are JSON objects (structured log lines), parsed. */
  json(): Array<Record<string, unknown>>;
  stop(): void;
}

type WithDestination = { [OUTPUT_DESTINATION]?: OutputDestination };

/**
 * Captures the lines this process writes with writeLine (shared/runtime/output.ts) until stop(), as
 * their destination: the loggers' and metrics' own, the local API's access log, and what the local
 * runtime's function instances write, which it writes on their behalf. Lines still reach the
 * terminal unless `silent`.
 */
export function captureOutput(options: { silent?: boolean } = {}): CapturedOutput {
  const lines: string[] = [];
  const byStream = { stdout: [] as string[], stderr: [] as string[] };
  const seam = globalThis as WithDestination;
  const previous = seam[OUTPUT_DESTINATION];
  const passOn: OutputDestination = previous ?? ((stream: OutputStream, line: string) => process[stream].write(`${line}\n`));
  const capture: OutputDestination = (stream, line) => {
    const parts = line.split('\n');
    lines.push(...parts);
    byStream[stream].push(...parts);
    if (!options.silent) passOn(stream, line);
  };
  seam[OUTPUT_DESTINATION] = capture;
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
      if (previous === undefined) delete seam[OUTPUT_DESTINATION];
      else seam[OUTPUT_DESTINATION] = previous;
    },
  };
}
