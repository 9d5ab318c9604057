import { CLOSED_PORT } from '../../local/addresses';
import { runInvoke } from '../../local/invoke';
import type { CliResult } from './cli';

/**
 * `npm run invoke` in this process, through its seam (runInvoke): its exit status and what it prints, as
 * runCli collects them from a spawned one, without a Node and a TypeScript loader started for each call.
 * Settings are this process's environment with `env` laid over it, as a spawned one's are, and under `env`, unless it
 * says otherwise, no running store (DYNAMODB_PORT a closed port) and no ENV_VARS file from the shell.
 */
export async function invokeInProcess(args: readonly string[], env: Record<string, string> = {}, input = ''): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runInvoke(args, {
    env: { ...process.env, DYNAMODB_PORT: String(CLOSED_PORT), ENV_VARS: '', ...env },
    readStdin: async () => input,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stderrIsTTY: false,
  });
  return { code, stdout, stderr };
}
