import { parseArgs, type ParseArgsConfig } from 'node:util';
import { messageOf } from '../shared/runtime/error-message';

/** What the operator commands share: a wrong command line exits 2 after saying what was wrong. */
export function usageFailure(usage: string): (message: string) => never {
  return (message) => {
    process.stderr.write(`${message}\n\n${usage}\n`);
    process.exit(2);
  };
}

export function showUsage(usage: string, exitCode = 0): never {
  process.stdout.write(`${usage}\n`);
  process.exit(exitCode);
}

/** node:util's parseArgs: a wrong option gets the usage and exit 2, not a stack trace; a declared --help, the usage and exit 0. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    const parsed = parseArgs(config);
    if ((parsed.values as { help?: boolean }).help) showUsage(usage);
    return parsed;
  } catch (error) {
    return usageFailure(usage)(messageOf(error));
  }
}
