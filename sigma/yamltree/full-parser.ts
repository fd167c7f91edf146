import { LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node, type Pair } from 'yaml';
import { lineStartsOf, positionFn } from './positions';
import type { YamlDocument, YamlStream, YNode, YValue } from './tree';

/** The fallback producer: the full `yaml` library, for anything outside the fast subset. */

/**
 * Aliases (`*name`) stand for the node anchored as `&name`, as every YAML loader (pySigma's
 * included) reads them. Each alias is expanded where it is used, so a few nested aliases can
 * stand for billions of nodes: past this many nodes in one document, the document is refused.
 */
const MAX_EXPANDED_NODES = 100_000;

class AliasExpansionTooLarge extends Error {}

type Expansion = { doc: Document.Parsed; remaining: number };

function fromYamlNode(node: unknown, fallbackOffset: number, ctx: Expansion): YNode {
  if (--ctx.remaining < 0) throw new AliasExpansionTooLarge();
  if (isAlias(node)) {
    const target = node.resolve(ctx.doc);
    // An alias to an anchor that does not exist is already a parse error of the document.
    return target ? fromYamlNode(target, node.range?.[0] ?? fallbackOffset, ctx) : { kind: 'scalar', value: null, style: 'plain', offset: fallbackOffset };
  }
  if (isMap(node)) {
    return {
      kind: 'map',
      offset: node.range?.[0] ?? fallbackOffset,
      pairs: node.items.map((p: Pair) => {
        const key = p.key as Node | null;
        const keyOffset = key?.range?.[0] ?? fallbackOffset;
        return { key: isScalar(key) ? String(key.value) : String(key), keyOffset, value: fromYamlNode(p.value, keyOffset, ctx) };
      }),
    };
  }
  if (isSeq(node)) return { kind: 'seq', offset: node.range?.[0] ?? fallbackOffset, items: node.items.map((i) => fromYamlNode(i, fallbackOffset, ctx)) };
  if (isScalar(node)) {
    const v = node.value;
    const value: YValue = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : String(v);
    const style =
      node.type === 'QUOTE_SINGLE' ? 'single' : node.type === 'QUOTE_DOUBLE' ? 'double' : node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED' ? 'block' : 'plain';
    return { kind: 'scalar', value, style, offset: node.range?.[0] ?? fallbackOffset };
  }
  return { kind: 'scalar', value: null, style: 'plain', offset: fallbackOffset };
}

export function parseYamlFull(text: string): YamlStream {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const list: Document.Parsed[] = Array.isArray(docs) ? docs : [];
  const documents = list.map((doc): YamlDocument => {
    const problems = doc.errors.map((e) => ({
      code: e.code === 'DUPLICATE_KEY' ? ('yaml-duplicate-key' as const) : ('yaml-syntax' as const),
      message: e.message.split('\n')[0] ?? e.message,
      offset: e.pos[0],
    }));
    const contents = doc.contents as Node | null;
    let root: YNode | null = null;
    try {
      root = contents === null || (isScalar(contents) && contents.value === null) ? null : fromYamlNode(contents, 0, { doc, remaining: MAX_EXPANDED_NODES });
    } catch (err) {
      if (!(err instanceof AliasExpansionTooLarge)) throw err;
      problems.push({
        code: 'yaml-syntax',
        message: `YAML aliases expand this document to more than ${MAX_EXPANDED_NODES.toLocaleString('en-US')} nodes`,
        offset: contents?.range?.[0] ?? 0,
      });
    }
    return { root, problems };
  });
  if (!Array.isArray(docs)) {
    const errs = (docs as { errors?: Array<{ message: string; pos: [number, number] }> }).errors ?? [];
    documents.push({ root: null, problems: errs.map((e) => ({ code: 'yaml-syntax', message: e.message, offset: e.pos[0] })) });
  }
  const starts = lineStartsOf(text);
  return { documents, position: positionFn(starts), producer: 'yaml' };
}
