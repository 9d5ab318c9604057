import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Gate {
  /** http://127.0.0.1:<port>/: a GET there is held until open(), then answered. */
  readonly url: string;
  /** Requests held so far, whether or not their client is still there. */
  waiting(): number;
  /** Answers every held request, and every later one at once. */
  open(): void;
  close(): Promise<void>;
}

/**
 * An HTTP endpoint that holds requests until the test opens it: a function that fetches it stays in
 * flight, across threads, for exactly as long as the test wants, with no timing to guess.
 */
export async function startGate(): Promise<Gate> {
  const held: ServerResponse[] = [];
  let opened = false;
  const server = createServer((_req, res) => (opened ? res.end('open') : held.push(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    waiting: () => held.length,
    open() {
      opened = true;
      for (const res of held.splice(0)) res.end('open');
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
