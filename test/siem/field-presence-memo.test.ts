import type { SigmaRule } from '../../sigma/model';
import type { FieldPresenceRequest } from '../../siem/adapter';
import { FieldPresenceMemo } from '../../domain/health/field-presence-memo';
import { LocalEventStore } from '../../siem/local/event-store';
import { LocalSiemAdapter } from '../../siem/local/local-adapter';
import { compileSigmaForLocal } from '../../siem/local/sigma-compiler';

/** A detection pass's field presence: one scan per logsource, each rule answered as if it had asked alone. */
describe('field presence shared by a detection pass', () => {
  let store: LocalEventStore;
  let adapter: LocalSiemAdapter<SigmaRule>;
  const asked: FieldPresenceRequest[] = [];
  const counting = { fieldPresence: (r: FieldPresenceRequest) => (asked.push(r), adapter.fieldPresence(r)) };
  const since = new Date(Date.UTC(2026, 0, 1));
  const windows = { product: 'windows', category: 'process_creation' };

  beforeAll(async () => {
    store = await LocalEventStore.open({ path: ':memory:' });
    adapter = new LocalSiemAdapter<SigmaRule>({ store, compiler: compileSigmaForLocal });
    const events = [
      { ts: since.getTime() + 1, Image: 'a.exe', CommandLine: 'a', ls: 'windows' },
      { ts: since.getTime() + 2, Image: 'b.exe', ls: 'windows' },
      { ts: since.getTime() + 3, Image: 'c', User: 'root', ls: 'linux' },
    ];
    await store.ingest('acme', 't', { kind: 'json-array', input: events }, { timestampField: 'ts', logsource: { product: { field: 'ls' }, category: 'process_creation' } });
  });
  afterAll(() => store.close());

  it('reads every field the pass announced in the first scan of a logsource and answers each rule with its own fields', async () => {
    const memo = new FieldPresenceMemo();
    memo.expect('acme', 't', windows, ['Image']);
    memo.expect('acme', 't', windows, ['CommandLine', 'User']);
    const request = (fields: string[], logsource = windows): FieldPresenceRequest => ({ tenantId: 'acme', targetId: 't', logsource, fields, since });

    // Three rules at once, then one more: one scan for the logsource.
    const answers = await Promise.all([
      memo.fieldPresence(counting, request(['Image'])),
      memo.fieldPresence(counting, request(['CommandLine'])),
      memo.fieldPresence(counting, request(['User', 'Image'])),
    ]);
    const later = await memo.fieldPresence(counting, request(['CommandLine', 'Image']));
    expect(asked).toHaveLength(1);
    expect([...asked[0]!.fields].sort()).toEqual(['CommandLine', 'Image', 'User']);
    // Each answer is exactly the adapter's own answer to that rule's request.
    for (const [got, fields] of [
      [answers[0], ['Image']],
      [answers[1], ['CommandLine']],
      [answers[2], ['User', 'Image']],
      [later, ['CommandLine', 'Image']],
    ] as const)
      expect(got).toEqual(await adapter.fieldPresence(request([...fields])));
    expect(answers[0]).toMatchObject({ events: 2, fields: { Image: 2 } });
    expect(answers[1]).toMatchObject({ fields: { CommandLine: 1 } });

    // A field nobody announced widens the next scan; another logsource has a scan of its own.
    asked.length = 0;
    expect(await memo.fieldPresence(counting, request(['ParentImage']))).toMatchObject({ events: 2, fields: { ParentImage: 0 } });
    expect(await memo.fieldPresence(counting, request(['User'], { product: 'linux', category: 'process_creation' }))).toMatchObject({ events: 1, fields: { User: 1 } });
    expect(asked.map((a) => [a.logsource.product, [...a.fields].sort()])).toEqual([
      ['windows', ['CommandLine', 'Image', 'ParentImage', 'User']],
      ['linux', ['User']],
    ]);
  });
});
