import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildOpenApiDocument } from '../contract/openapi-document';
import { BASE_PATH } from '../src/facts/routes';
import type { RequestTarget } from './request-target';

/**
 * The local server's documentation pages, outside the API (they are not routes of the deployed
 * stack): the OpenAPI document at /openapi.json and Swagger UI at /docs, served from the installed
 * swagger-ui-dist package so they work offline.
 */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** A Map, not an object literal: `/docs/constructor` must not find Object.prototype's members. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Animal store API reference</title>
    <link rel="icon" href="/docs/favicon-32x32.png" />
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: '/openapi.json',
        dom_id: '#swagger-ui',
        deepLinking: true,
        tryItOutEnabled: true,
        displayOperationId: true,
        persistAuthorization: true,
      });
    </script>
  </body>
</html>
`;

/** The server's modules load once, so the document is that of the code at start: build it once. */
let document: Record<string, unknown> | undefined;

/**
 * The document as served locally, with this server as its only one, so "Try it out" calls it. The
 * deployed stages' URLs live in infra/, which the local runtime does not read: openapi.json has them.
 */
function localDocument(host: string): string {
  document ??= buildOpenApiDocument([]);
  return JSON.stringify({ ...document, servers: [{ url: `http://${host}${BASE_PATH}`, description: 'This local server' }] });
}

/** Serves the documentation routes; returns false for any other request, which goes to the API. */
export async function serveDocs(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = target.pathAndQuery.split('?')[0];
  if (path === '/openapi.json') {
    send(res, 'application/json', localDocument(target.host));
  } else if (path === '/docs' || path === '/docs/') {
    send(res, 'text/html; charset=utf-8', PAGE);
  } else if (path?.startsWith('/docs/') && ASSETS.has(path.slice('/docs/'.length))) {
    const name = path.slice('/docs/'.length);
    send(res, ASSETS.get(name)!, await readFile(join(SWAGGER_UI_DIR, name)), 'public, max-age=3600');
  } else {
    return false;
  }
  return true;
}

function send(res: ServerResponse, contentType: string, body: string | Buffer, cacheControl = 'no-cache'): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': cacheControl, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
