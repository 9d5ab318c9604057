import { execFileSync, spawn } from 'node:child_process';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { parseCommandLine, usageFailure } from './command-line';

// `npx tsx tools/local-memory.ts`: npm start's resident memory under listing load (docs/performance.md). Every
// listing reaches the functions and dynalite: what a request leaves behind shows as growth.
const usage = `Usage: npx tsx tools/local-memory.ts [--listings <count>] [--clients <count>]

Starts npm start's server, creates 200 pets, then lists them with
distinct limits and status filters from several clients at once (default 4,000 listings, 4 clients),
printing the server's resident memory every 500 listings.`;

const { values: options } = parseCommandLine(
  { options: { listings: { type: 'string' }, clients: { type: 'string' }, help: { type: 'boolean', short: 'h' } } },
  usage,
);
const count = (option: 'listings' | 'clients', fallback: number) => {
  const value = Number(options[option] ?? fallback);
  return Number.isInteger(value) && value > 0 ? value : usageFailure(usage)(`--${option} takes a whole number, not "${options[option]}".`);
};
const listings = count('listings', 4_000);
const clients = count('clients', 4);

const server = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
  cwd: PROJECT_ROOT,
  env: { ...process.env, PORT: '0', DYNAMODB_PORT: '0', SYSTEM_LOG_LEVEL: 'WARN' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let banner = '';
server.stdout.on('data', (chunk) => (banner += chunk));
try {
  while (!/\n\s+curl /.test(banner)) {
    if (server.exitCode !== null) throw new Error(`npm start exited:\n${banner}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Its access log is not kept: thousands of lines would weigh on this process's memory, not the server's.
  server.stdout.removeAllListeners('data').resume();
  const baseUrl = /Animal store API\s+(\S+)/.exec(banner)![1]!;
  const headers = { authorization: `Bearer ${/API key\s+(\S+)/.exec(banner)![1]!}`, 'content-type': 'application/json' };
  const residentMiB = () => Number(execFileSync('ps', ['-o', 'rss=', '-p', String(server.pid)], { encoding: 'utf8' })) / 1024;
  const statuses = ['available', 'pending', 'sold'];
  for (let index = 0; index < 200; index++) {
    const body = JSON.stringify({ name: `pet ${index}`, categoryId: 1 + (index % 5), status: statuses[index % 3] });
    await (await fetch(`${baseUrl}/pets`, { method: 'POST', headers, body })).arrayBuffer();
  }
  console.log(`listings  resident MiB (${clients} clients)\n${'0'.padStart(8)}  ${residentMiB().toFixed(0)}`);
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (sent < listings) {
        const index = sent++;
        const filter = index % 4 === 3 ? '' : `&status=${statuses[index % 4]}`;
        await (await fetch(`${baseUrl}/pets?limit=${1 + (index % 100)}${filter}`, { headers })).arrayBuffer();
        if ((index + 1) % 500 === 0) console.log(`${String(index + 1).padStart(8)}  ${residentMiB().toFixed(0)}`);
      }
    }),
  );
} finally {
  server.kill('SIGTERM');
}
