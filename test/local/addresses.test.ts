import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { findLocalApi, findLocalStore, originOn } from '../../local/addresses';

/**
 * Where the local tools call npm start: at the origin its banner prints, from the settings it read. A
 * server listening on any host this machine has is reached there.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** This machine's own addresses beside loopback, one of each family where it has one (link-local ones need a zone). */
const OWN_ADDRESSES = ['IPv4', 'IPv6'].flatMap((family) => {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && !address.internal && address.family === family && !address.address.startsWith('fe80:'));
  return own === undefined ? [] : [own.address];
});

describe('the origin a client on this machine calls', () => {
  it.each(['127.0.0.1', 'localhost', '0.0.0.0', '::', '::1', ...OWN_ADDRESSES])('reaches a server listening on %s', async (host) => {
    server = createServer((_, res) => res.end('here'));
    await new Promise<void>((resolve) => server!.listen(0, host, resolve));
    const origin = originOn(host, (server.address() as AddressInfo).port);
    expect(await (await fetch(origin)).text()).toBe('here');
  });
});

describe('the local tools', () => {
  it("call the API where npm start's PORT and HOST put it, and say so", () => {
    expect(findLocalApi({ PORT: '3001', HOST: '0.0.0.0' })).toEqual({
      url: 'http://localhost:3001/v1',
      told: 'http://localhost:3001/v1 (PORT, HOST)',
    });
  });

  it("call the store DYNAMODB_ENDPOINT names before the embedded one's DYNAMODB_PORT, as npm start uses it", () => {
    expect(findLocalStore({ DYNAMODB_PORT: '4568' }).told).toBe('http://127.0.0.1:4568 (DYNAMODB_PORT)');
    expect(findLocalStore({ DYNAMODB_PORT: '4568', DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000/' }).told).toBe(
      'http://127.0.0.1:8000 (DYNAMODB_ENDPOINT)',
    );
  });

  it('refuse a setting npm start would refuse, naming it', () => {
    expect(() => findLocalApi({ PORT: 'eighty' })).toThrow('PORT must be a port number, got "eighty"');
    expect(() => findLocalStore({ DYNAMODB_ENDPOINT: 'ftp://x' })).toThrow('DYNAMODB_ENDPOINT must be an http or https URL');
  });
});
