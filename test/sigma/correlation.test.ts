import { readFileSync } from 'fs';
import { join } from 'path';
import { createCorrelationEngine, type CorrelationAlert } from '../../sigma/correlation';
import { parseSigma } from '../../sigma/parse';
import { CORPUS_DIR } from './support/corpus';

const base = (name: string, eventId: number): string =>
  `title: ${name}\nname: ${name}\nlogsource:\n    product: windows\n    service: security\ndetection:\n    sel:\n        EventID: ${eventId}\n    condition: sel`;

function engine(correlation: string, ...rules: string[]) {
  const c = parseSigma([correlation, ...rules].join('\n---\n'));
  expect(c.errors).toEqual([]);
  return createCorrelationEngine(c.documents);
}

const t = (minutes: number): number => Date.UTC(2026, 0, 1, 0, 0, 0) + minutes * 60_000;
const feed = (eng: ReturnType<typeof engine>, events: Array<[number, Record<string, unknown>]>): CorrelationAlert[] => events.flatMap(([m, e]) => eng.process(e, t(m)));

describe('correlation: event_count', () => {
  const corr = 'title: Brute force\ncorrelation:\n    type: event_count\n    rules: [failed]\n    group-by: [User]\n    timespan: 10m\n    condition:\n        gte: 3';
  it('fires when the count per group reaches the threshold within the window', () => {
    const eng = engine(corr, base('failed', 4625));
    const alerts = feed(eng, [
      [0, { EventID: 4625, User: 'bob' }],
      [1, { EventID: 4625, User: 'alice' }],
      [2, { EventID: 4625, User: 'bob' }],
      [3, { EventID: 4624, User: 'bob' }],
      [4, { EventID: 4625, User: 'bob' }],
    ]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ group: { User: 'bob' }, value: 3, events: 3, timestamp: t(4) });
  });

  it('slides the window: old events fall out', () => {
    const eng = engine(corr, base('failed', 4625));
    expect(
      feed(eng, [
        [0, { EventID: 4625, User: 'bob' }],
        [5, { EventID: 4625, User: 'bob' }],
        [11, { EventID: 4625, User: 'bob' }],
      ]),
    ).toHaveLength(0);
    expect(feed(eng, [[12, { EventID: 4625, User: 'bob' }]])).toHaveLength(1);
  });

  it('clears the group after an alert', () => {
    const eng = engine(corr, base('failed', 4625));
    const alerts = feed(
      eng,
      Array.from({ length: 7 }, (_, i) => [i, { EventID: 4625, User: 'bob' }] as [number, Record<string, unknown>]),
    );
    expect(alerts).toHaveLength(2);
  });

  it('rejects references to unknown rules', () => {
    const c = parseSigma(corr);
    expect(() => createCorrelationEngine(c.documents)).toThrow(expect.objectContaining({ code: 'correlation-unresolved-rule' }));
  });
});

describe('correlation: value_count', () => {
  it('counts distinct values of the condition field per group', () => {
    const eng = engine(
      'title: Spray\ncorrelation:\n    type: value_count\n    rules: [failed]\n    group-by: [IpAddress]\n    timespan: 1h\n    condition:\n        field: User\n        gte: 3',
      base('failed', 4625),
    );
    const alerts = feed(eng, [
      [0, { EventID: 4625, IpAddress: '1.2.3.4', User: 'a' }],
      [1, { EventID: 4625, IpAddress: '1.2.3.4', User: 'a' }],
      [2, { EventID: 4625, IpAddress: '1.2.3.4', User: 'b' }],
      [3, { EventID: 4625, IpAddress: '5.6.7.8', User: 'c' }],
      [4, { EventID: 4625, IpAddress: '1.2.3.4', User: 'c' }],
    ]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ group: { IpAddress: '1.2.3.4' }, value: 3 });
  });
});

describe('correlation: temporal', () => {
  const corr = 'title: Recon\ncorrelation:\n    type: temporal\n    rules: [a, b]\n    group-by: [Host]\n    timespan: 5m';
  it('fires when every rule matched in the window, in any order', () => {
    const eng = engine(corr, base('a', 1), base('b', 2));
    expect(
      feed(eng, [
        [0, { EventID: 2, Host: 'h' }],
        [3, { EventID: 1, Host: 'h' }],
      ]),
    ).toHaveLength(1);
  });
  it('does not fire across groups or outside the window', () => {
    const eng = engine(corr, base('a', 1), base('b', 2));
    expect(
      feed(eng, [
        [0, { EventID: 2, Host: 'h' }],
        [1, { EventID: 1, Host: 'x' }],
        [7, { EventID: 1, Host: 'h' }],
      ]),
    ).toHaveLength(0);
  });
  it('supports group-by aliases across rules', () => {
    const eng = engine(
      'title: Pair\ncorrelation:\n    type: temporal\n    rules: [a, b]\n    group-by: [ip]\n    timespan: 5m\n    aliases:\n        ip:\n            a: SourceIp\n            b: DestinationIp',
      base('a', 1),
      base('b', 2),
    );
    const alerts = feed(eng, [
      [0, { EventID: 1, SourceIp: '10.0.0.1' }],
      [1, { EventID: 2, DestinationIp: '10.0.0.1' }],
    ]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.group).toEqual({ ip: '10.0.0.1' });
  });
  it('evaluates a boolean condition expression over rule names', () => {
    const eng = engine(
      "title: Expr\ncorrelation:\n    type: temporal\n    rules: [a, b, c]\n    group-by: [Host]\n    timespan: 5m\n    condition: 'a and not c'",
      base('a', 1),
      base('b', 2),
      base('c', 3),
    );
    expect(feed(eng, [[0, { EventID: 1, Host: 'h' }]])).toHaveLength(1);
  });
});

describe('correlation: temporal_ordered', () => {
  const corr = 'title: Ordered\ncorrelation:\n    type: temporal_ordered\n    rules: [a, b]\n    group-by: [Host]\n    timespan: 5m';
  it('fires only when the rules match in the listed order', () => {
    const eng = engine(corr, base('a', 1), base('b', 2));
    expect(
      feed(eng, [
        [0, { EventID: 2, Host: 'h' }],
        [1, { EventID: 1, Host: 'h' }],
      ]),
    ).toHaveLength(0);
    expect(feed(eng, [[2, { EventID: 2, Host: 'h' }]])).toHaveLength(1);
  });
});

describe('correlation: value_sum / value_avg', () => {
  it('aggregates a numeric field', () => {
    const eng = engine(
      'title: Exfil\ncorrelation:\n    type: value_sum\n    rules: [up]\n    group-by: [User]\n    timespan: 1h\n    condition:\n        field: Bytes\n        gt: 1000',
      base('up', 5),
    );
    const alerts = feed(eng, [
      [0, { EventID: 5, User: 'u', Bytes: 600 }],
      [1, { EventID: 5, User: 'u', Bytes: '600' }],
    ]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.value).toBe(1200);
  });
});

describe('correlation: the spec example (failed logins followed by a success)', () => {
  it('chains an event_count correlation into a temporal_ordered one', () => {
    const text = readFileSync(join(CORPUS_DIR, 'spec-examples/spec-document/correlation_failed_logins_followed_by_successful_login.yml'), 'utf8');
    const c = parseSigma(text);
    expect(c.errors).toEqual([]);
    const eng = createCorrelationEngine(c.documents);
    const events: Array<[number, Record<string, unknown>]> = [];
    for (let i = 0; i < 10; i++) events.push([i * 0.5, { EventID: 4625, User: 'victim' }]);
    events.push([6, { EventID: 4624, User: 'victim' }]);
    const alerts = feed(eng, events);
    expect(alerts.map((a) => a.correlation.title)).toEqual(['Multiple failed logons', 'Correlation - Multiple Failed Logins Followed by Successful Login']);
    expect(alerts[1]!.group).toEqual({ User: 'victim' });
  });
});
