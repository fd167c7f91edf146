/** Sigma YAML → typed documents (rules, correlations, filters), each with positions and its errors. */
export { parseRule, parseSigma, type ParseOptions } from './collection';
export { normaliseDate } from './common-attributes';
