import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServerProcess, type RunningServer } from '../helpers/cli';

/** A port nothing listens on now: the inspector's, for this run. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface InspectorTarget {
  readonly type: string;
  readonly url: string;
  readonly webSocketDebuggerUrl: string;
}

/** A Chrome DevTools Protocol session on one inspector target, as VS Code and Chrome open one. */
async function openSession(webSocketUrl: string) {
  const socket = new WebSocket(webSocketUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  const events: Array<{ method: string; params: Record<string, unknown> }> = [];
  socket.addEventListener('message', (message) => {
    const data = JSON.parse(String(message.data)) as { method?: string; params?: Record<string, unknown> };
    if (data.method) events.push({ method: data.method, params: data.params ?? {} });
  });
  let id = 0;
  return {
    events,
    send(method: string, params: Record<string, unknown> = {}) {
      socket.send(JSON.stringify({ id: ++id, method, params }));
    },
    close: () => socket.close(),
  };
}

describe('npm run debug', () => {
  let server: RunningServer;
  let inspectPort: number;
  beforeAll(async () => {
    inspectPort = await freePort();
    server = await startServerProcess({ INSPECT_PORT: String(inspectPort) }, { script: 'local/debug.ts' });
  });
  afterAll(() => server?.stop());

  it('opens the inspector on 127.0.0.1 at INSPECT_PORT, listing the server as a target, and still serves the API', async () => {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as InspectorTarget[];
    expect(targets).toEqual([expect.objectContaining({ type: 'node', url: expect.stringMatching(/\/local\/debug\.ts$/) })]);
    expect(targets[0]!.webSocketDebuggerUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${inspectPort}/`));

    const response = await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(response.status).toBe(200);
  });

  it("attaches a debugger to each function instance, whose bundle maps to the function's TypeScript source", async () => {
    const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as InspectorTarget[];
    const session = await openSession(target!.webSocketDebuggerUrl);
    try {
      // Node reaches worker threads through its main target (the NodeWorker domain), as VS Code does.
      session.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
      const response = await fetch(`${server.baseUrl}/pets/1`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      expect(response.status).toBe(404);
      await expect
        .poll(() => session.events.filter((event) => event.method === 'NodeWorker.attachedToWorker').length, { timeout: 10_000 })
        .toBeGreaterThan(0);
      for (const attached of session.events.filter((event) => event.method === 'NodeWorker.attachedToWorker')) {
        session.send('NodeWorker.sendMessageToWorker', {
          sessionId: attached.params.sessionId,
          message: JSON.stringify({ id: 1, method: 'Debugger.enable' }),
        });
      }
      const sourcesOfBundles = () =>
        session.events
          .filter((event) => event.method === 'NodeWorker.receivedMessageFromWorker')
          .map(
            (event) => JSON.parse(event.params.message as string) as { method?: string; params?: { url?: string; sourceMapURL?: string } },
          )
          .filter((message) => message.method === 'Debugger.scriptParsed' && /\/getPet\.\d+\.mjs$/.test(message.params?.url ?? ''))
          .flatMap((message) => sourcesIn(message.params?.sourceMapURL ?? ''));
      await expect.poll(sourcesOfBundles, { timeout: 10_000 }).toContainEqual(expect.stringMatching(/functions\/get-pet\.ts$/));
    } finally {
      session.close();
    }
  });

  it('refuses to start, naming INSPECT_PORT, when that port is in use', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const result = await runCli('local/debug.ts', [], { PORT: '0', DYNAMODB_PORT: '0', INSPECT_PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Could not start the local API: Port ${port} is in use: set INSPECT_PORT to a free port.`);
      expect(result.stdout).not.toContain('Animal store API');
    } finally {
      taken.close();
    }
  });
});

/** The sources an inline source map (a data: URL) names. */
function sourcesIn(sourceMapUrl: string): string[] {
  const [, base64] = /^data:application\/json;(?:charset=[^;]+;)?base64,(.*)$/.exec(sourceMapUrl) ?? [];
  if (base64 === undefined) return [];
  return (JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as { sources: string[] }).sources;
}
