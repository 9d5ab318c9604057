import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts a server on a port and resolves with the port it got (0 picks a free one). A port in use
 * fails with the name of the setting that moves it, which is what the developer needs to know.
 */
export async function listen(server: Server, port: number, host: string, portSetting: string): Promise<number> {
  server.listen(port, host);
  try {
    // once() rejects with the server's 'error' event, e.g. a port already taken.
    await once(server, 'listening');
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? new Error(`Port ${port} is in use: set ${portSetting} to a free port.`)
      : error;
  }
  return (server.address() as AddressInfo).port;
}
