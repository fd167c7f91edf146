import { SigmaError } from '../errors';
import type { SigmaCollection, SigmaDocument, SigmaRule } from '../model';
import { parseYaml } from '../yamltree';
import { parseCorrelationDoc } from './correlation-document';
import { DocumentContext } from './document-context';
import { parseFilterDoc } from './filter-document';
import { parseRuleDoc } from './rule-document';
import { isMap, isNull, mapEntries } from './yaml-nodes';

export interface ParseOptions {
  /** File name used in error messages. */
  readonly source?: string;
}

/**
 * Parses a YAML text with one or more `---`-separated Sigma documents (rules, correlations, filters).
 * Never throws for content problems: each document lists its own errors and the collection gathers
 * them all. Documents whose YAML itself is broken are dropped.
 */
export function parseSigma(text: string, options: ParseOptions = {}): SigmaCollection {
  try {
    return parseSigmaDocuments(text, options);
  } catch (err) {
    // Hostile nesting (thousands of levels of YAML blocks or brackets) exhausts the stack in the
    // YAML layer; it is reported as the rule's error rather than crashing the caller.
    if (!(err instanceof RangeError)) throw err;
    return { documents: [], errors: [new SigmaError('yaml-too-deep', 'the document nests too deeply to be a Sigma rule', { line: 1, column: 1 }, options.source)] };
  }
}

function parseSigmaDocuments(text: string, options: ParseOptions): SigmaCollection {
  const stream = parseYaml(text);
  const documents: SigmaDocument[] = [];
  const errors: SigmaError[] = [];
  for (const doc of stream.documents) {
    const ctx = new DocumentContext(stream.position, options.source, text);
    if (doc.problems.length > 0) {
      for (const p of doc.problems) errors.push(new SigmaError(p.code, p.message, stream.position(p.offset), options.source));
      continue;
    }
    const root = doc.root;
    if (root === null || isNull(root)) continue;
    if (!isMap(root)) {
      errors.push(new SigmaError('document-not-map', 'a Sigma document must be a YAML map', ctx.pos(root), options.source));
      continue;
    }
    const entries = new Map(mapEntries(root));
    let document: SigmaDocument;
    if (entries.has('correlation')) document = parseCorrelationDoc(ctx, root, entries);
    else if (entries.has('filter')) document = parseFilterDoc(ctx, root, entries);
    else document = parseRuleDoc(ctx, root, entries);
    documents.push(document);
    errors.push(...document.errors);
  }
  return { documents, errors };
}

/** Strict convenience: exactly the rules of a text, throwing the first error of any document. */
export function parseRule(text: string, options: ParseOptions = {}): SigmaRule {
  const collection = parseSigma(text, options);
  const first = collection.errors[0];
  if (first) throw first;
  const rule = collection.documents.find((d): d is SigmaRule => d.kind === 'rule');
  if (!rule) throw new SigmaError('document-kind-unknown', 'the text holds no Sigma rule', { line: 1, column: 1 }, options.source);
  return rule;
}
