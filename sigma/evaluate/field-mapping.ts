import type { CompileOptions, SigmaEvent } from './types';

/** Field lookup: the flat key first, then a dotted walk into nested objects. */
export function getFieldValue(event: SigmaEvent, name: string): unknown {
  const direct = event[name];
  if (direct !== undefined || !name.includes('.')) return direct;
  let cur: unknown = event;
  for (const seg of name.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

export function makeGetter(name: string, mapping: CompileOptions['fieldMapping']): (event: SigmaEvent) => unknown {
  const mapped = mapping?.[name];
  const names = mapped === undefined ? [name] : typeof mapped === 'string' ? [mapped] : [...mapped];
  const compiled = names.map((n) => {
    if (!n.includes('.')) return (e: SigmaEvent): unknown => e[n];
    const path = n.split('.');
    return (e: SigmaEvent): unknown => {
      const direct = e[n];
      if (direct !== undefined) return direct;
      let cur: unknown = e;
      for (const seg of path) {
        if (cur === null || typeof cur !== 'object') return undefined;
        cur = (cur as Record<string, unknown>)[seg];
      }
      return cur;
    };
  });
  if (compiled.length === 1) return compiled[0]!;
  return (e) => {
    for (const g of compiled) {
      const v = g(e);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}
