import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { messageOf } from '../shared/runtime/error-message';

/** Where `npm start` serves unless PORT and HOST say otherwise: loopback only. */
export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';

/** What Node reports when the host to listen on is not an address of this machine, or no address at all. */
const UNAVAILABLE_HOST = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME']);

/**
 * Starts a server on a port and resolves with the port it got (0 picks a free one). A port in use, or a
 * host this machine cannot listen on, fails naming the setting that moves it.
 */
export async function listen(server: Server, port: number, host: string, portSetting: string, hostSetting?: string): Promise<number> {
  server.listen(port, host);
  try {
    // once() rejects with the server's 'error' event, e.g. a port already taken.
    await once(server, 'listening');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EADDRINUSE') throw new Error(`Port ${port} is in use: set ${portSetting} to a free port.`);
    if (hostSetting !== undefined && UNAVAILABLE_HOST.has(code)) {
      throw new Error(`${hostSetting} must be an address of this machine such as 127.0.0.1 or 0.0.0.0, got "${host}" (${code})`);
    }
    throw error;
  }
  return (server.address() as AddressInfo).port;
}

/**
 * What `listen` would refuse now for `port` on `host`, found by listening there and closing at once;
 * undefined when it would listen. Asked for every port before any starts, so each taken one is named together.
 */
export async function listenRefusal(port: number, host: string, portSetting: string, hostSetting?: string): Promise<string | undefined> {
  if (port === 0) return undefined;
  const server = createServer();
  try {
    await listen(server, port, host, portSetting, hostSetting);
    return undefined;
  } catch (error) {
    return messageOf(error);
  } finally {
    server.close();
  }
}
