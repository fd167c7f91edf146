import path from 'node:path';
import express, { type Request, type Response } from 'express';
import { metricsRoute } from '../metrics/metrics';

/** Swagger UI's static build, as the npm package ships it: served from here, never from a CDN. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The files of the build the page loads; nothing else of the package (its demo page points at the Petstore) is served. */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

/**
 * Only this origin: the page works offline and behind a firewall, and a document that named another
 * host could not make the browser fetch from it. Swagger UI sets inline styles; it needs no eval.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Starts Swagger UI on the document named by the page. `validatorUrl: null` keeps it from sending
 * the document to the public validator (and from showing a badge that needs the internet).
 */
const INIT_SCRIPT = `window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: new URL(root.dataset.openapi, document.baseURI).href,
    domNode: root,
    deepLinking: true,
    displayOperationId: true,
    displayRequestDuration: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    filter: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The page links its assets and the OpenAPI document relatively, so it works at /docs and /docs/
 * and behind a proxy that mounts the service under a path prefix.
 */
function page(assets: string, openapi: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>detflow API reference</title>
<link rel="stylesheet" href="${escapeAttribute(assets)}swagger-ui.css">
<link rel="icon" type="image/png" href="${escapeAttribute(assets)}favicon-32x32.png" sizes="32x32">
</head>
<body>
<noscript>This page renders the OpenAPI document with JavaScript; the document itself is at <a href="${escapeAttribute(openapi)}">${escapeAttribute(openapi)}</a>.</noscript>
<div id="swagger-ui" data-openapi="${escapeAttribute(openapi)}"></div>
<script src="${escapeAttribute(assets)}swagger-ui-bundle.js"></script>
<script src="${escapeAttribute(assets)}detflow-docs.js"></script>
</body>
</html>
`;
}

/**
 * GET /docs: the API reference, Swagger UI rendering the service's own OpenAPI document
 * (`openapiPath`, relative to the service root, e.g. `api/v1/openapi.json`). Public, like the
 * document itself: it holds no data, and "Try it out" asks for the reader's own token.
 */
export function apiReference(openapiPath: string): express.Router {
  const router = express.Router({ strict: true });
  const sendPage = (req: Request, res: Response) => {
    metricsRoute(res, '/docs');
    // From /docs the folder is docs/; from /docs/ it is the current one.
    const slash = req.originalUrl.split('?')[0]!.endsWith('/');
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(page(slash ? './' : 'docs/', slash ? `../${openapiPath}` : openapiPath));
  };
  router.get('/docs', sendPage);
  router.get('/docs/', sendPage);
  router.get('/docs/detflow-docs.js', (_req, res) => {
    metricsRoute(res, '/docs/{asset}');
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('application/javascript').send(INIT_SCRIPT);
  });
  router.get('/docs/:asset', (req, res, next) => {
    const asset = req.params.asset;
    if (!ASSETS.has(asset)) return next();
    metricsRoute(res, '/docs/{asset}');
    // The files change only with the package's version; an hour keeps reloads cheap and upgrades visible.
    res.sendFile(path.join(SWAGGER_UI_DIR, asset), { maxAge: 3_600_000, dotfiles: 'deny' });
  });
  return router;
}
