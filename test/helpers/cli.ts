import { spawn, type ChildProcess } from 'node:child_process';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one of the project's TypeScript entry points as `npm run` would (in `cwd`, the project unless a checkout is given), and collects its output. */
export function runCli(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
  cwd: string = PROJECT_ROOT,
): Promise<CliResult> {
  // tsx's loader in the script's own process: tsx's command would start a second Node to run it.
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd, env: { ...process.env, ...env } });
  child.stdin.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolvePromise) => child.on('close', (code) => resolvePromise({ code: code ?? 1, stdout, stderr })));
}

export interface RunningServer {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly docsUrl: string;
  readonly dynamoDbPort: string;
  readonly output: () => string;
  stop(): Promise<void>;
  /** `kill -9`: the server gets no chance to finish a write or close its store. */
  crash(): Promise<void>;
}

/**
 * Starts `npm start`'s entry point (`npm run dev`'s with `watch`) on free ports, in `cwd` (the project
 * unless a checkout is given), and waits for its banner. Node loads TypeScript through tsx's loader in
 * the server's own process, not through tsx's command, which would run it in a child: a signal
 * reaches the server itself, SIGKILL included.
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  {
    script = 'local/server.ts',
    cwd = PROJECT_ROOT,
    watch = false,
  }: {
    /** The entry point: local/debug.ts for npm run debug. */
    script?: string;
    /** The checkout to run in: a temporary one when a test edits files. */
    cwd?: string;
    /** Runs as npm run dev does. */
    watch?: boolean;
  } = {},
): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, ...(watch ? ['--watch'] : [])], {
    cwd,
    env: { ...process.env, PORT: '0', DYNAMODB_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const banner = await new Promise<Record<string, string>>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000);
    const check = () => {
      if (!/\n\s+curl /.test(output)) return;
      clearTimeout(timer);
      const field = (label: string) => new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(output)?.[1] ?? '';
      resolvePromise({
        baseUrl: field('Animal store API'),
        apiKey: field('API key'),
        docsUrl: field('API reference'),
        dynamoDbPort: /Local DynamoDB\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? '',
      });
    };
    child.stdout?.on('data', check);
    child.on('exit', () => reject(new Error(`server exited:\n${output}`)));
  });
  return {
    baseUrl: banner.baseUrl!,
    apiKey: banner.apiKey!,
    docsUrl: banner.docsUrl!,
    dynamoDbPort: banner.dynamoDbPort!,
    output: () => output,
    stop: () => signal(child, 'SIGTERM'),
    crash: () => signal(child, 'SIGKILL'),
  };
}

/** Sends a signal and waits until the process has exited (at once when it already has). */
function signal(child: ChildProcess, name: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    child.once('exit', () => resolvePromise());
    child.kill(name);
  });
}
