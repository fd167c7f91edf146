import { fieldReader } from '../field-access';
import type { CompileOptions, SigmaEvent } from './types';

/** The event field names a Sigma field is read from: its mapped names in order, else the field itself. */
export function mappedFieldNames(field: string, mapping: CompileOptions['fieldMapping']): readonly string[] {
  const mapped = mapping?.[field];
  return mapped === undefined ? [field] : typeof mapped === 'string' ? [mapped] : [...mapped];
}

/** Reads a Sigma field from an event: the value of the first mapped name the event has a value for. */
export function mappedFieldReader(field: string, mapping: CompileOptions['fieldMapping']): (event: SigmaEvent) => unknown {
  const readers = mappedFieldNames(field, mapping).map(fieldReader);
  if (readers.length === 1) return readers[0]!;
  return (e) => {
    for (const read of readers) {
      const v = read(e);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}
