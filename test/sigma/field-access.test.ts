import { createCorrelationEngine } from '../../sigma/correlation';
import { fieldValue } from '../../sigma/field-access';
import { parseSigma } from '../../sigma/parse';
import { matcher } from './support/rules';

// Events are data: a field is only what the event itself holds, never a member Object.prototype
// lends every object (`constructor`, `toString`, `__proto__`, `hasOwnProperty`, ...).

const one = (field: string, value: string): ((event: Record<string, unknown>) => boolean) => matcher(`    sel:\n        ${field}: ${value}\n    condition: sel`);

describe('event fields are own properties only', () => {
  it('an inherited member is not a field: constructor|exists: true does not match {}', () => {
    expect(one('constructor|exists', 'true')({})).toBe(false);
    expect(one('constructor|exists', 'false')({})).toBe(true);
    expect(one('__proto__|exists', 'true')({})).toBe(false);
    expect(one('toString|exists', 'true')({ Image: 'x' })).toBe(false);
  });

  it('a field named after an inherited member is absent, so null matches it and nothing else does', () => {
    expect(one('toString', 'null')({})).toBe(true);
    expect(one('hasOwnProperty', 'null')({})).toBe(true);
    expect(one('toString|contains', "'function'")({})).toBe(false);
    expect(one('constructor|re', "'.*'")({})).toBe(false);
  });

  it('a negated test on such a field sees it missing', () => {
    const m = matcher('    sel:\n        Image: x\n    filter:\n        constructor|exists: true\n    condition: sel and not filter');
    expect(m({ Image: 'x' })).toBe(true);
  });

  it('dotted paths walk own properties only', () => {
    expect(one('process.constructor|exists', 'true')({ process: {} })).toBe(false);
    expect(one('__proto__.constructor|exists', 'true')({})).toBe(false);
    expect(one('process.name.length|exists', 'true')({ process: { name: 'cmd.exe' } })).toBe(false);
  });

  it('a real own field with such a name matches', () => {
    expect(one('constructor', 'x')({ constructor: 'x' })).toBe(true);
    expect(one('constructor|exists', 'true')({ constructor: 'x' })).toBe(true);
    expect(one('toString', 'x')({ toString: 'x' })).toBe(true);
    expect(one('__proto__', 'x')(JSON.parse('{"__proto__": "x"}'))).toBe(true);
    expect(one('process.constructor', 'x')({ process: { constructor: 'x' } })).toBe(true);
  });

  it('correlation group-by reads fields the same way', () => {
    const text = `title: base
name: base
logsource:
    product: windows
detection:
    sel:
        Image: x
    condition: sel
---
title: burst
correlation:
    type: event_count
    rules: [base]
    group-by: [constructor]
    timespan: 1m
    condition:
        gte: 2
`;
    const engine = createCorrelationEngine(parseSigma(text).documents);
    const ts = '2024-01-01T00:00:00Z';
    engine.process({ Image: 'x', '@timestamp': ts });
    const alerts = engine.process({ Image: 'x', '@timestamp': ts });
    expect(alerts.map((a) => a.group)).toEqual([{ constructor: null }]);
  });
});

describe('fieldValue', () => {
  it('reads the flat key first, then the dotted path', () => {
    expect(fieldValue({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1);
    expect(fieldValue({ a: { b: { c: 3 } } }, 'a.b.c')).toBe(3);
    expect(fieldValue({ a: [{ b: 4 }] }, 'a.0.b')).toBe(4);
    expect(fieldValue({ a: 'text' }, 'a.length')).toBeUndefined();
  });

  it('never returns an inherited member', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expect(fieldValue({}, name)).toBeUndefined();
      expect(fieldValue({ a: {} }, `a.${name}`)).toBeUndefined();
    }
    expect(fieldValue(JSON.parse('{"constructor": 1, "a": {"__proto__": 2}}'), 'constructor')).toBe(1);
    expect(fieldValue(JSON.parse('{"a": {"__proto__": 2}}'), 'a.__proto__')).toBe(2);
    expect(fieldValue(Object.create({ inherited: 'x' }), 'inherited')).toBeUndefined();
  });
});
