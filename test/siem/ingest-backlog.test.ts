import { IngestBacklogFull, LocalEventStore } from '../../siem/local/event-store';

const TARGET = 'local-target';
const line = (i: number) => JSON.stringify({ ts: `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, n: i });

/** An NDJSON body that sends its first line and then waits until released: a batch under way. */
function heldBody(first: string): { input: AsyncIterable<string>; release: (rest: string) => void } {
  let release!: (rest: string) => void;
  const rest = new Promise<string>((r) => (release = r));
  return {
    input: (async function* () {
      yield `${first}\n`;
      yield await rest;
    })(),
    release,
  };
}

describe('the ingest backlog', () => {
  it('refuses a batch beyond the limit at once, reading nothing of it, and takes batches again once the backlog drains', async () => {
    const store = await LocalEventStore.open({ path: ':memory:', maxPendingBatches: 2 });
    try {
      const a = heldBody(line(1));
      const b = heldBody(line(2));
      const first = store.ingest('acme', TARGET, { kind: 'ndjson', input: a.input }, { timestampField: 'ts' });
      const second = store.ingest('acme', TARGET, { kind: 'ndjson', input: b.input }, { timestampField: 'ts' });

      let read = false;
      const third = (async function* () {
        read = true;
        yield line(3);
      })();
      const refused = await store.ingest('acme', TARGET, { kind: 'ndjson', input: third }, { timestampField: 'ts' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(IngestBacklogFull);
      expect(refused).toMatchObject({ pending: 2, limit: 2, message: expect.stringMatching(/2 batches under way \(the limit is 2\)/) });
      expect(read).toBe(false);

      a.release(`${line(4)}\n`);
      b.release(`${line(5)}\n`);
      expect((await first).accepted).toBe(2);
      expect((await second).accepted).toBe(2);
      expect((await store.ingest('acme', TARGET, { kind: 'ndjson', input: line(6) }, { timestampField: 'ts' })).accepted).toBe(1);
      expect((await store.tenantStats('acme')).events).toBe(5);
    } finally {
      await store.close();
    }
  });

  it('takes any number of batches at once when the limit is 0', async () => {
    const store = await LocalEventStore.open({ path: ':memory:', maxPendingBatches: 0 });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.ingest('acme', TARGET, { kind: 'ndjson', input: line(i) }, { timestampField: 'ts' })));
      expect(results.reduce((s, r) => s + r.accepted, 0)).toBe(40);
    } finally {
      await store.close();
    }
  });
});
