import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

/** Sends raw bytes and resolves with the whole answer once the server closes or 1 s of silence passes. */
function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(api.port, '127.0.0.1', () => socket.write(request));
    let text = '';
    const done = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    };
    socket.setTimeout(1_000, () => socket.destroy());
    socket.on('data', (chunk) => (text += chunk));
    socket.on('close', done);
    socket.on('error', reject);
  });
}

const GET = (path: string, headers: string) =>
  `GET ${path} HTTP/1.1\r\n${headers}Authorization: Bearer ${api.apiKey}\r\nConnection: close\r\n\r\n`;

describe('the Host header', () => {
  it('is refused when repeated, before it can reach a Location or Link (RFC 9112)', async () => {
    const answer = await raw(GET('/v1/pets', 'Host: localhost\r\nHost: evil.example\r\n'));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Bad Request' });
  });

  it.each(['evil.example/x?', 'a b', 'localhost:3000@evil.example', 'ex"ample'])('is refused when it is not a host: %s', async (host) => {
    const answer = await raw(GET('/openapi.json', `Host: ${host}\r\n`));
    expect(answer.status).toBe(400);
  });

  it('is used when well-formed: the served document names this server by it', async () => {
    const answer = await raw(GET('/openapi.json', `Host: 127.0.0.1:${api.port}\r\n`));
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { servers: Array<{ url: string }> }).servers[0]!.url).toBe(`http://127.0.0.1:${api.port}/v1`);
  });
});

describe('the documentation pages', () => {
  it.each(['/docs/constructor', '/docs/__proto__', '/docs/toString', '/docs/hasOwnProperty'])(
    'leave %s to the API, which answers with its Error body, not a 500',
    async (path) => {
      const response = await api.request(path);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'not_found', status: 404 });
    },
  );
});

describe("Node's own answers to malformed requests", () => {
  it('carry a JSON body, as API Gateway gives its own answers', async () => {
    const answer = await raw('GARBAGE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Bad Request' });
  });
});
