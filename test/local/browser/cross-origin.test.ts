import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInChromium, launchChromium } from '../../helpers/chromium';
import { startTestApi, type TestApi } from '../../helpers/local-api';

/** A front-end dev server stand-in: serves an empty page from its own origin. */
async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describeInChromium('a browser app on another origin calling the local API', () => {
  let api: TestApi;
  let browser: Browser;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  const accessLog: Array<{ httpMethod: string; status: number }> = [];

  beforeAll(async () => {
    allowed = await startPageServer();
    other = await startPageServer();
    api = await startTestApi({
      cors: { allowOrigins: [allowed.origin], maxAgeSeconds: 600 },
      accessLog: (line) => accessLog.push(JSON.parse(line) as { httpMethod: string; status: number }),
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    allowed?.server.close();
    other?.server.close();
  });

  /** Runs fetch() in a page of `origin`: a POST with a bearer key and a JSON body, which needs a preflight. */
  async function createFrom(origin: string) {
    const page = await browser.newPage();
    const logged = accessLog.length;
    await page.goto(origin);
    const result = await page.evaluate(
      async ({ baseUrl, apiKey }) => {
        try {
          const response = await fetch(`${baseUrl}/pets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'From the browser', categoryId: 1 }),
          });
          return { status: response.status, location: response.headers.get('location'), body: await response.json() };
        } catch (error) {
          return { error: String(error) };
        }
      },
      { baseUrl: api.baseUrl, apiKey: api.apiKey },
    );
    await page.close();
    // The browser sends its preflight internally, out of the page's sight: the API's access log shows it.
    const preflights = accessLog
      .slice(logged)
      .filter((entry) => entry.httpMethod === 'OPTIONS')
      .map((entry) => entry.status);
    return { result, preflights };
  }

  it('succeeds from the allowed origin: the preflight passes, the pet is created, and Location is readable', async () => {
    const { result, preflights } = await createFrom(allowed.origin);
    expect(preflights).toEqual([204]);
    expect(result).toEqual(
      expect.objectContaining({
        status: 201,
        location: expect.stringMatching(/\/v1\/pets\/\d+$/),
        body: expect.objectContaining({ name: 'From the browser' }),
      }),
    );
  });

  it('is refused by the browser from any other origin', async () => {
    const { result } = await createFrom(other.origin);
    expect(result).toEqual({ error: expect.stringMatching(/Failed to fetch/) });
  });
});
