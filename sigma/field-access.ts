/**
 * Reading a field of an event, the one way every part of the engine does it. Only the event's own
 * properties count: an event is data, so a rule field named `constructor`, `toString` or
 * `__proto__` must not find Object.prototype's members (which would make `constructor|exists: true`
 * match every event).
 *
 * A name is the flat key first (`{'process.name': ...}`, as flattened exports write it), then, when
 * that holds no value, a dotted path into nested objects (`{process: {name: ...}}`).
 */

type Event = Readonly<Record<string, unknown>>;

/** The value of an event field, or undefined when the event does not have it. */
export function fieldValue(event: Event, name: string): unknown {
  return readField(event, name, name.includes('.') ? name.split('.') : undefined);
}

/** `fieldValue` for one fixed name, with the dotted path split once: for per-event loops. */
export function fieldReader(name: string): (event: Event) => unknown {
  if (!name.includes('.')) return (event) => ownValue(event, name);
  const path = name.split('.');
  return (event) => readField(event, name, path);
}

function ownValue(target: object, key: string): unknown {
  // Reading first and asking hasOwn only about values that exist keeps absent fields cheap: an
  // inherited member is always defined, so an undefined read is absent either way.
  const value = (target as Record<string, unknown>)[key];
  return value !== undefined && Object.hasOwn(target, key) ? value : undefined;
}

function readField(event: Event, name: string, path: readonly string[] | undefined): unknown {
  const direct = ownValue(event, name);
  if (direct !== undefined || path === undefined) return direct;
  let cur: unknown = event;
  for (const segment of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = ownValue(cur, segment);
  }
  return cur;
}
