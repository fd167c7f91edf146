import path from 'node:path';
import express, { type Request, type Response, type NextFunction } from 'express';
import { metricsRoute } from '../metrics/metrics';
import { CONSOLE_ASSETS, CONSOLE_BUILD_DIR, ensureConsoleBuilt } from './build-console';

/**
 * Self only: the console loads nothing from another host and runs no inline script or style, so an
 * injected fragment of markup can neither run nor phone home. Scripts set styles through the CSSOM,
 * which style-src does not govern.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** Assets are linked relatively (works behind a path prefix) with their digest, so a new build is fetched at once. */
function page(version: Record<string, string>): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>detflow console</title>
<link rel="stylesheet" href="console/app.css?v=${escapeAttribute(version['app.css'] ?? '')}">
<script type="module" src="console/app.js?v=${escapeAttribute(version['app.js'] ?? '')}"></script>
</head>
<body>
<div id="app" data-api="api/v1/"></div>
<noscript>The console needs JavaScript. The API reference is at <a href="docs">docs</a>.</noscript>
</body>
</html>
`;
}

/**
 * GET /: the reviewers' and operators' console (console/src, built by esbuild on first use when the
 * build is missing or of other sources). Public like /docs: it holds no data; every figure it shows
 * comes from the API with the token the reader signs in with.
 */
export function consoleSite(): express.Router {
  const router = express.Router({ strict: true });
  let built: ReturnType<typeof ensureConsoleBuilt> | null = null;
  const build = () => {
    built ??= ensureConsoleBuilt();
    built.catch(() => (built = null));
    return built;
  };
  const sendPage = (_req: Request, res: Response, next: NextFunction) => {
    metricsRoute(res, '/');
    build().then((manifest) => {
      res.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      const version = Object.fromEntries(Object.entries(manifest.files).map(([f, v]) => [f, v.sha256.slice(0, 12)]));
      res.type('html').send(page(version));
    }, next);
  };
  router.get('/', sendPage);
  router.get('/console/:asset', (req, res, next) => {
    const asset = req.params.asset as (typeof CONSOLE_ASSETS)[number];
    if (!CONSOLE_ASSETS.includes(asset)) return next();
    metricsRoute(res, '/console/{asset}');
    build().then(() => {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.sendFile(path.join(CONSOLE_BUILD_DIR, asset), { maxAge: 3_600_000, dotfiles: 'deny' });
    }, next);
  });
  return router;
}
