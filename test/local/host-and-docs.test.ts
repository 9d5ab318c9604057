import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { OPENAPI_PATH } from '../../tools/openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

/** Sends raw bytes and resolves with the whole answer once the server closes or 10 s of silence pass (a cold start takes seconds). */
function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(api.port, '127.0.0.1', () => socket.write(request));
    let text = '';
    const done = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    };
    socket.setTimeout(10_000, () => socket.destroy());
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

  it('names the server served at localhost as the committed openapi.json names npm start: by localhost, the port aside', async () => {
    const answer = await raw(GET('/openapi.json', `Host: localhost:${api.port}\r\n`));
    const served = new URL((JSON.parse(answer.body) as { servers: Array<{ url: string }> }).servers[0]!.url);
    const committed = new URL((JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { servers: Array<{ url: string }> }).servers[0]!.url);
    expect(served.port).toBe(String(api.port));
    served.port = committed.port;
    expect(served.href).toBe(committed.href);
  });
});

describe('an absolute-form request target (RFC 9112 §3.2.2)', () => {
  const authority = () => `127.0.0.1:${api.port}`;

  it('is served as its origin-form: path and query', async () => {
    await api.createPet({ name: 'Absolute', categoryId: 1 });
    await api.createPet({ name: 'Form', categoryId: 1 });
    const answer = await raw(GET(`http://${authority()}/v1/pets?limit=1`, 'Host: localhost\r\n'));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual([expect.objectContaining({ name: 'Form' })]);
  });

  it("takes its authority in place of the Host header, so Location and Link name the target's host", async () => {
    const body = JSON.stringify({ name: 'Located', categoryId: 1 });
    const answer = await raw(
      `POST HTTP://${authority()}/v1/pets HTTP/1.1\r\nHost: localhost:1\r\nAuthorization: Bearer ${api.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(201);
    const { id } = JSON.parse(answer.body) as { id: number };
    expect(answer.headers).toMatch(new RegExp(`\r\nLocation: http://${authority()}/v1/pets/${id}\r\n`, 'i'));

    const listing = await raw(GET(`http://${authority()}/v1/pets?limit=1`, 'Host: localhost:1\r\n'));
    expect(listing.headers).toMatch(new RegExp(`\r\nLink: <http://${authority()}/v1/pets\\?limit=1&cursor=`, 'i'));
  });

  it('serves the documentation pages too, naming this server by the authority', async () => {
    const answer = await raw(GET(`http://${authority()}/openapi.json`, 'Host: localhost:1\r\n'));
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { servers: Array<{ url: string }> }).servers[0]!.url).toBe(`http://${authority()}/v1`);
  });

  it('has the path "/" when its path is empty', async () => {
    const answer = await raw(GET(`http://${authority()}?limit=1`, 'Host: localhost\r\n'));
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'not_found' });
  });

  it('is refused 421 for an https target: this server speaks plain HTTP only (RFC 9110 §7.4)', async () => {
    const answer = await raw(GET(`https://${authority()}/v1/pets`, 'Host: localhost\r\n'));
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Misdirected Request' });
  });

  it.each([
    ['a scheme other than http', `ftp://127.0.0.1/v1/pets`],
    ['user information', `http://user@127.0.0.1/v1/pets`],
    ['an authority that is not a host', `http://a_b/v1/pets`],
    ['no authority', `http:///v1/pets`],
    ['a fragment', `http://127.0.0.1/v1/pets#top`],
  ])('is refused 400 with %s', async (_, target) => {
    const answer = await raw(GET(target, 'Host: localhost\r\n'));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Bad Request' });
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
