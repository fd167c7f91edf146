import { parseYamlFast } from './fast-parser';
import { parseYamlFull } from './full-parser';
import type { YamlStream } from './tree';

export { parseYamlFast } from './fast-parser';
export { parseYamlFull } from './full-parser';
export { resolvePlain } from './plain-scalars';
export { isQuoted, toJS, type YamlDocument, type YamlProblem, type YamlStream, type YMap, type YNode, type YPair, type YScalar, type YSeq, type YValue } from './tree';

/** Fast subset parser with full-library fallback. */
export function parseYaml(text: string): YamlStream {
  return parseYamlFast(text) ?? parseYamlFull(text);
}
