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

/** node:util's parseArgs, an unknown or malformed option answered with the usage and exit 2, not a stack trace. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    return usageFailure(usage)(messageOf(error));
  }
}
