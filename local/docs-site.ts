import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as startOpenApi from '../shared/contract/openapi-document';
import { BASE_PATH } from '../shared/facts/routes';
import type { RequestTarget } from './request-target';

/**
 * The local server's documentation pages, outside the API: /openapi.json and Swagger UI at /docs, served
 * from the installed swagger-ui-dist so they work offline.
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

/** The OpenAPI document's builder, as the sources are now (npm run dev reloads it with the route table). */
export type OpenApiBuilder = Pick<typeof startOpenApi, 'buildOpenApiDocument'>;

/** Each builder's document, built once: a builder is a module of the sources as they were when it was loaded. */
const documents = new WeakMap<OpenApiBuilder['buildOpenApiDocument'], Record<string, unknown>>();

/**
 * The document as served locally, with this server as its only one, so "Try it out" calls it. The
 * deployed stages' URLs live in infra/, which the local runtime does not read: openapi.json has them.
 */
function localDocument(host: string, { buildOpenApiDocument }: OpenApiBuilder): string {
  let document = documents.get(buildOpenApiDocument);
  if (document === undefined) {
    document = buildOpenApiDocument([]);
    documents.set(buildOpenApiDocument, document);
  }
  return JSON.stringify({ ...document, servers: [{ url: `http://${host}${BASE_PATH}`, description: 'This local server' }] });
}

/**
 * Serves the documentation routes; returns false for any other request, which goes to the API.
 * `openApi` gives the document's builder as the sources now are; the one this process loaded by default.
 */
export async function serveDocs(
  req: IncomingMessage,
  res: ServerResponse,
  target: RequestTarget,
  openApi: () => Promise<OpenApiBuilder> = async () => startOpenApi,
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = target.pathAndQuery.split('?')[0];
  if (path === '/openapi.json') {
    send(res, 'application/json', localDocument(target.host, await openApi()));
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
