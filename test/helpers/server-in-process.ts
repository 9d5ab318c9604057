import { startServer } from '../../local/server';
import type { CliResult } from './cli';

/**
 * `npm start` in this process through its seam (startServer), for a start it should refuse: exit status 1 and its
 * lines when it refuses, as runCli collects them from a spawned one, without a Node and a TypeScript loader started
 * for each. A server that does start is closed at once, with exit status 0, for the test to fail on.
 * Settings are this process's environment with `env` laid over it, as a spawned one's are, and under `env`, unless it
 * says otherwise, free ports (PORT and DYNAMODB_PORT 0).
 */
export async function startServerInProcess(env: Record<string, string> = {}, args: readonly string[] = []): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const api = await startServer(args, {
    env: { ...process.env, PORT: '0', DYNAMODB_PORT: '0', ...env },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stdoutIsTTY: false,
  });
  await api?.close();
  return { code: api === undefined ? 1 : 0, stdout, stderr };
}
