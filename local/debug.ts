import { open, url } from 'node:inspector';

/**
 * `npm run debug`: npm start with the inspector open on 127.0.0.1:$INSPECT_PORT, in the server's own
 * process rather than through NODE_OPTIONS, which npm's process would take first (docs/local-development.md).
 */
const DEFAULT_INSPECT_PORT = 9229;

const setting = process.env.INSPECT_PORT;
const port = setting === undefined || setting === '' ? DEFAULT_INSPECT_PORT : Number(setting);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  refuseToStart(`INSPECT_PORT must be a port number, got "${setting}"`);
}
// A debugger that launched this process (VS Code's launch configuration) has opened one already.
if (url() === undefined) {
  // Loopback only: whoever reaches the inspector runs code as you.
  open(port, '127.0.0.1');
  // open() reports a port it could not listen on, but opens nothing rather than throwing.
  if (url() === undefined) refuseToStart(`Port ${port} is in use: set INSPECT_PORT to a free port.`);
}
// Imported only now, so that the inspector is open before the server's modules load.
await (await import('./server')).serveFromProcess();

function refuseToStart(line: string): never {
  process.stderr.write(`Could not start the local API: ${line}\n`);
  process.exit(1);
}
