import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { SecretBox } from '../../config/secret-box';
import type { Db } from '../../db/client';
import { tenants, webhookAttempts, webhookDeliveries, webhookSettings } from '../../db/schema';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { webhookDelivery } from '../../domain/notifications/webhook-delivery';
import { createTestDatabase } from '../support/harness';

/**
 * The database goes away just after the receiver acknowledged a delivery: the attempt that runs again
 * (the outage interceptor's, or Temporal's retry) records the acknowledgement and posts nothing more.
 */
describe('a webhook acknowledged while the database is away', () => {
  let test: Awaited<ReturnType<typeof createTestDatabase>>;
  let receiver: http.Server;
  let url: string;
  const posts: string[] = [];

  beforeAll(async () => {
    test = await createTestDatabase();
    await test.database.migrate();
    receiver = http.createServer((req, res) => {
      posts.push(String(req.headers['x-detflow-delivery']));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
    await test.drop();
  });

  /** The database, with its next `failures` transactions refused as if the server shut down. */
  function flakyTransactions(db: Db, failures: number): Db {
    let left = failures;
    return new Proxy(db, {
      get(target, prop, receiverObj) {
        if (prop !== 'transaction') return Reflect.get(target, prop, receiverObj);
        return (...args: Parameters<Db['transaction']>) => {
          if (left > 0) {
            left--;
            return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
          }
          return target.transaction(...args);
        };
      },
    });
  }

  it('records the acknowledged attempt once it can, and never posts it twice', async () => {
    const secrets = SecretBox.fromPassphrase('test');
    const { db } = test.database;
    await db.insert(tenants).values({ id: 'acme', name: 'Acme', tier: 'enterprise' });
    await db.insert(webhookSettings).values({ tenantId: 'acme', url, secret: secrets.seal('s3cret'), events: ['deployment.succeeded'] });

    const deliveries = webhookDelivery({ db: flakyTransactions(db, 2), secrets });
    const id = await deliveries.recordNotification({ tenantId: 'acme', event: 'deployment.succeeded', sourceKey: 'k1', data: { rule_id: 'r' } });
    expect(id).not.toBeNull();

    // The receiver answers 204; recording it fails, twice (the database is still away the second time).
    let failure: unknown;
    await deliveries.deliverWebhook({ deliveryId: id! }).catch((err) => (failure = err));
    expect(isDatabaseUnavailable(failure)).toBe(true);
    await expect(deliveries.deliverWebhook({ deliveryId: id! })).rejects.toThrow('administrator command');
    expect(posts).toEqual([id]);
    const [pending] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id!));
    expect(pending!.status).toBe('pending');

    // Back: the acknowledgement is recorded as the one attempt there was, and nothing is posted again.
    await expect(deliveries.deliverWebhook({ deliveryId: id! })).resolves.toEqual({ statusCode: 204, attempts: 1 });
    expect(posts).toEqual([id]);
    const [delivered] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id!));
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204, lastError: null });
    const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, id!));
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([[1, 204, null]]);

    // A later run of the same delivery finds it delivered.
    await expect(deliveries.deliverWebhook({ deliveryId: id! })).resolves.toEqual({ statusCode: 204, attempts: 1 });
    expect(posts).toEqual([id]);
  });

  it('a refused post is recorded in one transaction with the delivery, and the next attempt posts again', async () => {
    const secrets = SecretBox.fromPassphrase('test');
    const { db } = test.database;
    let refuse = true;
    const fetchImpl: typeof fetch = async (input, init) => (refuse ? new Response('no', { status: 503 }) : fetch(input, init));
    const deliveries = webhookDelivery({ db: flakyTransactions(db, 1), secrets, fetchImpl });
    const id = await deliveries.recordNotification({ tenantId: 'acme', event: 'deployment.succeeded', sourceKey: 'k2', data: { rule_id: 'r' } });
    const before = posts.length;

    // The 503 cannot be recorded: neither the attempt nor the delivery's last error is half written.
    await expect(deliveries.deliverWebhook({ deliveryId: id! })).rejects.toThrow('administrator command');
    expect(await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, id!))).toEqual([]);
    // A refusal is not remembered: the next attempt posts, and this time the receiver takes it.
    refuse = false;
    await expect(deliveries.deliverWebhook({ deliveryId: id! })).resolves.toEqual({ statusCode: 204, attempts: 2 });
    expect(posts.slice(before)).toEqual([id]);
    const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, id!));
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[2, 204]]);
  });
});
