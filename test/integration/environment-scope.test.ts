import { and, eq } from 'drizzle-orm';
import { alerts, approvals, targets } from '../../db/schema';
import { createApiKey, createTenant, imageRule, startTestService, type TestService } from '../support/harness';

/**
 * Environment scope on every operation. A token limited to `dev` sees and touches only `dev`: an
 * object of `prod` is not found for it (as another tenant's is), a `prod` target it names is 403,
 * lists leave `prod` out, and settings spanning every environment need a token scoped to all.
 *
 * The second half is generated from the OpenAPI document, whose operations carry the scope and
 * permission their route declares (`x-detflow-scope`, `x-detflow-permission`): every operation is
 * run with a matrix of tokens against objects in `dev` and `prod` of two tenants, so an operation
 * added later is checked the same way, and one without a declaration fails here.
 */

const RULE_ID = 'e5c0be00-0000-4000-8000-000000000017';
const DAY = 86_400_000;
const WINDOW = { from: new Date(Date.now() - 3 * DAY).toISOString(), to: new Date(Date.now() - DAY).toISOString() };
const FIXTURE = JSON.stringify({ name: 'hit', expect: 'match', event: { Image: 'C:\\Tools\\evil.exe', CommandLine: 'evil.exe' } });
const ALL_PERMISSIONS = ['rules:read', 'rules:write', 'events:write', 'deploy', 'approve', 'admin'] as const;

type Env = 'dev' | 'prod';
type Objects = Record<'deployment' | 'approval' | 'replay' | 'shadow' | 'alert' | 'rule-test' | 'target' | 'environment', Record<Env, string>>;

let svc: TestService;
const objects = {} as Objects;
/** Tokens of the default tenant: `dev`-only and unlimited, one per permission. */
const devOnly = {} as Record<(typeof ALL_PERMISSIONS)[number], string>;
const everywhere = {} as Record<(typeof ALL_PERMISSIONS)[number], string>;
let otherTenantAdmin: string;

async function ok<T = any>(res: Promise<{ status: number; body: any }>, status: number): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body as T;
}

beforeAll(async () => {
  svc = await startTestService();
  const post = (path: string, body: unknown) => svc.request('POST', `/api/v1${path}`, { body });
  await ok(
    post('/settings/targets', {
      name: 'prod-local',
      kind: 'local',
      environment: 'prod',
      cost_model: { currency: 'USD', price_per_gb_scanned: 1, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 },
    }),
    201,
  );
  const targetName: Record<Env, string> = { dev: 'local', prod: 'prod-local' };
  objects.target = targetName;
  objects.environment = { dev: 'dev', prod: 'prod' };
  await ok(post('/rules', { rule: imageRule(RULE_ID, 'evil.exe') }), 201);

  objects.deployment = {} as Record<Env, string>;
  objects.approval = {} as Record<Env, string>;
  objects.replay = {} as Record<Env, string>;
  objects.shadow = {} as Record<Env, string>;
  objects['rule-test'] = {} as Record<Env, string>;
  objects.alert = {} as Record<Env, string>;
  for (const env of ['dev', 'prod'] as const) {
    const target = targetName[env];
    objects.deployment[env] = (await ok(post('/rules/deploy', { rule_id: RULE_ID, target, approval_required: false }), 202)).id;
    const waiting = await ok(post('/approvals', { rule_id: RULE_ID, targets: [target], description: `to ${env}` }), 202);
    objects.approval[env] = waiting.approval_id ?? waiting.id;
    objects.replay[env] = (await ok(post('/rules/replay', { rule_id: RULE_ID, target, ...WINDOW }), 202)).id;
    objects.shadow[env] = (await ok(post('/rules/shadow', { rule_id: RULE_ID, target, duration: 'PT10M', interval: 'PT1M' }), 202)).id;
    objects['rule-test'][env] = (await ok(post('/rules/test', { rule_id: RULE_ID, target, fixtures: [FIXTURE] }), 200)).id;
    const [t] = await svc.database.db
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, 'default'), eq(targets.name, target)));
    const [alert] = await svc.database.db
      .insert(alerts)
      .values({
        tenantId: 'default',
        deploymentId: objects.deployment[env],
        ruleId: RULE_ID,
        version: 1,
        targetId: t!.id,
        eventSeq: env === 'dev' ? 1 : 2,
        eventId: `event-${env}`,
        eventTime: new Date(),
        event: { Image: 'C:\\Tools\\evil.exe' },
        status: 'open',
      })
      .returning({ id: alerts.id });
    objects.alert[env] = alert!.id;
  }
  for (const permission of ALL_PERMISSIONS) {
    devOnly[permission] = (await createApiKey(svc, svc.token, { name: `dev ${permission}`, permissions: [permission], environments: ['dev'] })).token;
    everywhere[permission] = (await createApiKey(svc, svc.token, { name: `all ${permission}`, permissions: [permission] })).token;
  }
  // Environments are named per tenant: the other tenant's are named apart, so its `prod` is not this one's.
  otherTenantAdmin = await createTenant(svc, 'scope-other', 'enterprise', ['other-dev', 'other-prod']);
}, 120_000);
afterAll(() => svc.close());

describe('environment scope: what a dev-only token could do to prod before', () => {
  it('does not decide a prod approval (approve or admin), which stays pending', async () => {
    for (const token of [devOnly.approve, devOnly.admin]) {
      const res = await svc.request('POST', `/api/v1/approvals/${objects.approval.prod}/decision`, { token, body: { decision: 'reject', comment: 'no' } });
      expect(res.status).toBe(404);
    }
    const [row] = await svc.database.db.select().from(approvals).where(eq(approvals.id, objects.approval.prod));
    expect(row!.status).toBe('pending');
  });

  it('needs rules:write to stop a shadow or cancel a replay, and a dev token cannot touch prod ones', async () => {
    expect((await svc.request('POST', `/api/v1/shadows/${objects.shadow.dev}/stop`, { token: devOnly['rules:read'] })).status).toBe(403);
    expect((await svc.request('POST', `/api/v1/replays/${objects.replay.dev}/cancel`, { token: devOnly['rules:read'] })).status).toBe(403);
    expect((await svc.request('POST', `/api/v1/shadows/${objects.shadow.prod}/stop`, { token: devOnly['rules:write'] })).status).toBe(404);
    expect((await svc.request('POST', `/api/v1/replays/${objects.replay.prod}/cancel`, { token: devOnly['rules:write'] })).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/shadows/${objects.shadow.prod}`)).body.status).toBe('running');
  });

  it('does not triage a prod alert', async () => {
    const res = await svc.request('PATCH', `/api/v1/alerts/${objects.alert.prod}`, { token: devOnly['rules:write'], body: { disposition: 'false_positive' } });
    expect(res.status).toBe(404);
    const [row] = await svc.database.db.select().from(alerts).where(eq(alerts.id, objects.alert.prod));
    expect(row!.status).toBe('open');
  });

  it('reads no prod object, and lists leave prod out', async () => {
    const reader = devOnly['rules:read'];
    for (const path of [
      `/deployments/${objects.deployment.prod}`,
      `/approvals/${objects.approval.prod}`,
      `/replays/${objects.replay.prod}`,
      `/shadows/${objects.shadow.prod}`,
      `/alerts/${objects.alert.prod}`,
      `/rules/tests/${objects['rule-test'].prod}`,
    ]) {
      expect([path, (await svc.request('GET', `/api/v1${path}`, { token: reader })).status]).toEqual([path, 404]);
      expect([path, (await svc.request('GET', `/api/v1${path}`, { token: everywhere['rules:read'] })).status]).toEqual([path, 200]);
    }
    expect((await svc.request('GET', '/api/v1/settings/targets/prod-local', { token: devOnly.admin })).status).toBe(404);
    for (const [path, prodId, devId] of [
      ['/deployments?limit=500', objects.deployment.prod, objects.deployment.dev],
      ['/approvals?limit=500', objects.approval.prod, objects.approval.dev],
      ['/alerts?limit=500', objects.alert.prod, objects.alert.dev],
      ['/replays?limit=500', objects.replay.prod, objects.replay.dev],
      ['/shadows?limit=500', objects.shadow.prod, objects.shadow.dev],
    ] as const) {
      const limited = JSON.stringify((await svc.request('GET', `/api/v1${path}`, { token: reader })).body);
      const all = JSON.stringify((await svc.request('GET', `/api/v1${path}`, { token: everywhere['rules:read'] })).body);
      expect([path, limited.includes(prodId), limited.includes(devId)]).toEqual([path, false, true]);
      expect([path, all.includes(prodId), all.includes(devId)]).toEqual([path, true, true]);
    }
  });

  it('refuses lint and tests against a prod target with 403 insufficient-scope', async () => {
    const lint = await svc.request('POST', '/api/v1/rules/lint', { token: devOnly['rules:read'], body: { rule: imageRule(RULE_ID, 'evil.exe'), target: 'prod-local' } });
    expect(lint.status).toBe(403);
    expect(lint.body.type).toBe('https://detflow.dev/problems/insufficient-scope');
    const test = await svc.request('POST', '/api/v1/rules/test', { token: devOnly['rules:read'], body: { rule_id: RULE_ID, target: 'prod-local', fixtures: [FIXTURE] } });
    expect(test.status).toBe(403);
  });

  it('needs a token of every environment to change the webhook', async () => {
    const webhook = { url: 'https://hooks.example.test/detflow', secret: 'a-secret-of-enough-length', events: ['deployment.succeeded'] };
    const limited = await svc.request('PUT', '/api/v1/settings/webhook', { token: devOnly.admin, body: webhook });
    expect(limited.status).toBe(403);
    expect(limited.body.detail).toMatch(/every environment/);
    expect((await svc.request('DELETE', '/api/v1/settings/webhook', { token: devOnly.admin })).status).toBe(403);
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { token: everywhere.admin, body: webhook })).status).toBe(200);
  });
});

type Scope = { kind: string; object?: keyof Objects; param?: string; in?: string; field?: string };
type Operation = { method: string; path: string; operationId: string; permission: string | undefined; scopes: Scope[]; query: string[] };

/** A valid request body for the operations whose scope names a target in the body, for that target. */
const TARGET_BODIES: Record<string, (target: string) => unknown> = {
  deployRule: (target) => ({ rule_id: RULE_ID, target, approval_required: true }),
  submitApproval: (target) => ({ rule_id: RULE_ID, targets: [target] }),
  rollbackRule: (target) => ({ rule_id: RULE_ID, target, reason: 'matrix' }),
  lintRule: (target) => ({ rule: imageRule(RULE_ID, 'evil.exe'), target }),
  testRule: (target) => ({ rule_id: RULE_ID, target, fixtures: [FIXTURE] }),
  replayRule: (target) => ({ rule_id: RULE_ID, target, ...WINDOW }),
  shadowRule: (target) => ({ rule_id: RULE_ID, target, duration: 'PT10M', interval: 'PT1M' }),
};

describe('every operation, generated from the OpenAPI document', () => {
  let operations: Operation[];
  beforeAll(async () => {
    const doc = (await svc.request('GET', '/api/v1/openapi.json')).body;
    operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        method,
        path,
        operationId: op.operationId,
        permission: op['x-detflow-permission'],
        scopes: op['x-detflow-scope'],
        query: ((op.parameters ?? []) as Array<{ in: string; name: string }>).filter((p) => p.in === 'query').map((p) => p.name),
      })),
    );
  });

  /** The path with each parameter filled: the object of `env` when the scope names one, else a well-formed id. */
  const pathFor = (op: Operation, env: Env) => {
    const object = op.scopes.find((s) => s.kind === 'object');
    return `/api/v1${op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (object && object.param === name) return encodeURIComponent(objects[object.object!][env]);
      return name === 'version'
        ? '1'
        : name === 'name'
          ? 'local'
          : name === 'id' && (op.path.startsWith('/rules/{id}') || op.path === '/health/rules/{id}')
            ? RULE_ID
            : '00000000-0000-4000-8000-000000000000';
    })}`;
  };
  const call = (op: Operation, token: string | null, env: Env = 'dev', body?: unknown, query = '', localAddress?: string) =>
    svc.request(op.method.toUpperCase(), `${pathFor(op, env)}${query}`, {
      token,
      ...(localAddress ? { localAddress } : {}),
      ...(body !== undefined ? { body } : op.method === 'get' || op.method === 'delete' ? {} : { body: {} }),
    });

  it('every operation declares a scope', () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.filter((op) => !Array.isArray(op.scopes) || op.scopes.length === 0).map((op) => op.operationId)).toEqual([]);
  });

  it('without a token, with a revoked or an expired one: 401 everywhere', async () => {
    const revoked = await createApiKey(svc, svc.token, { name: 'revoked', permissions: ['admin'] });
    await svc.request('DELETE', `/api/v1/settings/api-keys/${revoked.id}`);
    const expiring = await createApiKey(svc, svc.token, { name: 'expiring', permissions: ['admin'], expires_at: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, 2500));
    // Each operation from its own loopback address: failed logins are throttled per address.
    for (const [i, op] of operations.entries()) {
      for (const token of [null, revoked.token, expiring.token])
        expect([op.operationId, (await call(op, token, 'dev', undefined, '', `127.0.1.${i + 1}`)).status]).toEqual([op.operationId, 401]);
    }
  });

  it('a token without the operation’s permission: 403', async () => {
    for (const op of operations.filter((o) => o.permission)) {
      const other = ALL_PERMISSIONS.find((p) => p !== op.permission && !(op.permission !== 'admin' && op.permission !== 'operator' && p === 'admin'))!;
      expect([op.operationId, (await call(op, everywhere[other])).status]).toEqual([op.operationId, 403]);
    }
  });

  it('objects of another tenant, and of an environment outside the token’s: 404; its own: found', async () => {
    // (Another tenant is asked for the prod objects: target names are per tenant, and it has a `local` of its own.)
    for (const op of operations.filter((o) => o.scopes.some((s) => s.kind === 'object'))) {
      const permission = (op.permission ?? 'rules:read') as (typeof ALL_PERMISSIONS)[number];
      expect([op.operationId, 'other tenant', (await call(op, otherTenantAdmin, 'prod')).status]).toEqual([op.operationId, 'other tenant', 404]);
      expect([op.operationId, 'prod', (await call(op, devOnly[permission], 'prod')).status]).toEqual([op.operationId, 'prod', 404]);
      const own = (await call(op, devOnly[permission], 'dev')).status;
      expect([op.operationId, 'dev', [401, 403, 404].includes(own)]).toEqual([op.operationId, 'dev', false]);
    }
  });

  it('a target of an environment outside the token’s: 403 insufficient-scope; its own: past the check', async () => {
    for (const op of operations.filter((o) => o.scopes.some((s) => s.kind === 'targets'))) {
      const permission = op.permission as (typeof ALL_PERMISSIONS)[number];
      const scope = op.scopes.find((s) => s.kind === 'targets')!;
      if (scope.in === 'query') {
        const events = (target: string) =>
          svc.request('POST', `/api/v1${op.path}?target=${target}`, {
            token: devOnly[permission],
            body: '{"Image":"x"}\n',
            headers: { 'content-type': 'application/x-ndjson' },
          });
        expect([op.operationId, (await events('prod-local')).status]).toEqual([op.operationId, 403]);
        expect([op.operationId, [401, 403, 404].includes((await events('local')).status)]).toEqual([op.operationId, false]);
        continue;
      }
      const body = TARGET_BODIES[op.operationId];
      expect([op.operationId, typeof body]).toEqual([op.operationId, 'function']);
      const prod = await call(op, devOnly[permission], 'dev', body!('prod-local'));
      expect([op.operationId, prod.status, prod.body.type]).toEqual([op.operationId, 403, 'https://detflow.dev/problems/insufficient-scope']);
      const dev = await call(op, devOnly[permission], 'dev', body!('local'));
      expect([op.operationId, [401, 403, 404].includes(dev.status)]).toEqual([op.operationId, false]);
    }
  });

  it('settings that span every environment: 403 for a limited token, answered for an unlimited one', async () => {
    for (const op of operations.filter((o) => o.scopes.some((s) => s.kind === 'every-environment'))) {
      const permission = op.permission as (typeof ALL_PERMISSIONS)[number];
      expect([op.operationId, (await call(op, devOnly[permission])).status]).toEqual([op.operationId, 403]);
      expect([op.operationId, [401, 403].includes((await call(op, everywhere[permission])).status)]).toEqual([op.operationId, false]);
    }
  });

  it('lists: a limited token sees its environment’s items and none of another’s', async () => {
    const prodKeys = Object.values(objects).map((o) => o.prod);
    for (const op of operations.filter((o) => o.method === 'get' && o.scopes.some((s) => s.kind === 'list'))) {
      const permission = (op.permission ?? 'rules:read') as (typeof ALL_PERMISSIONS)[number];
      // Reports take no limit; a report on one object (a rule's health) is what lies in the token's environments.
      const res = await call(op, devOnly[permission], 'dev', undefined, op.query.includes('limit') ? '?limit=500' : '');
      expect([op.operationId, res.status]).toEqual([op.operationId, 200]);
      const text = JSON.stringify(res.body);
      expect([op.operationId, prodKeys.filter((k) => text.includes(`"${k}"`))]).toEqual([op.operationId, []]);
    }
  });
});
