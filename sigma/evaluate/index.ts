/**
 * Local evaluation of a rule over JSON events. A rule is compiled once into closures; per event
 * the only allocations are the lower-cased copies of fields that string tests need, and those are
 * memoised per event so several items on the same field share one copy.
 *
 * Semantics chosen where the spec leaves it to the backend:
 *  - `Field: null` matches when the field is absent or null.
 *  - Keywords are case-insensitive substring searches over every string/number leaf of the event
 *    (or only `keywordFields` when given).
 *  - `neq`/`not` on a missing field: the inner test is false, so the negation is true (SPL/KQL
 *    behaviour, not SQL three-valued logic).
 *  - Regexes are unanchored searches over at most `maxRegexInput` characters of the value.
 */
export { compileCondition, compileDetectionItem, compileRule } from './compile';
export { mappedFieldNames } from './field-mapping';
export { resolvePlaceholders } from './placeholders';
export { parseTimestamp, timePartOf } from './timestamps';
export { compileRegex } from './value-tests';
export type { CompiledRule, CompileOptions, EventMatcher, SigmaEvent } from './types';
