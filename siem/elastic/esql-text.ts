import { SiemRequestError } from '../remote/errors';

/**
 * The few edits the adapter makes to the ES|QL a rule compiles to (`FROM <index> | WHERE …`): the
 * metadata fields the ES|QL rule type needs, another source (a setting's index patterns, a
 * fixture index), commands appended after it, and the fields it reads.
 *
 * Elastic documents that a non-aggregating ES|QL rule query needs `METADATA _id` after FROM for
 * alert deduplication (Kibana 9.4 injects it when missing; earlier versions need it written), and
 * its examples give `METADATA _id, _version, _index`: detflow writes it, so the deployed query
 * behaves the same on every version, and searches return `_id` to name matched events.
 */
export const METADATA = 'METADATA _id, _index, _version';

export interface EsqlParts {
  /** Index patterns of the FROM command, comma-separated. */
  readonly source: string;
  readonly metadata: string | null;
  /** Everything after the first pipe (`WHERE …`). */
  readonly rest: string;
}

const FROM = /^\s*FROM\s+([^\s|,]+(?:\s*,\s*[^\s|,]+)*)(?:\s+(METADATA\s+[^|]+?))?\s*\|\s*([\s\S]*)$/i;

/** The parts of a `FROM … | …` query; null for a query of another shape. */
export function splitEsql(query: string): EsqlParts | null {
  const m = FROM.exec(query);
  if (!m) return null;
  return { source: m[1]!.replace(/\s+/g, ''), metadata: m[2]?.trim() ?? null, rest: m[3]!.trim() };
}

function parts(query: string): EsqlParts {
  const p = splitEsql(query);
  if (!p) throw new SiemRequestError('elastic', 'rejected', `not an ES|QL query of the form FROM <index> | …: ${query.slice(0, 80)}`);
  return p;
}

function join(p: EsqlParts): string {
  return `FROM ${p.source}${p.metadata ? ` ${p.metadata}` : ''} | ${p.rest}`;
}

/** The query with the rule type's METADATA directive (unchanged when it has one). */
export function withMetadata(query: string): string {
  const p = parts(query);
  return p.metadata ? query : join({ ...p, metadata: METADATA });
}

/** The query reading other index patterns. */
export function withSource(query: string, source: string): string {
  return join({ ...parts(query), source });
}

export function sourceOf(query: string): string {
  return parts(query).source;
}

/** The query with more processing commands after it. */
export function appended(query: string, ...commands: string[]): string {
  return [query.trim(), ...commands].join(' | ');
}

const KEYWORDS = new Set(['and', 'or', 'not', 'like', 'rlike', 'is', 'null', 'in', 'true', 'false', 'where', 'asc', 'desc', 'nulls', 'first', 'last', 'by']);

/**
 * The fields the processing commands of a query read (identifiers outside string literals that are
 * not keywords or function names), each with whether it is compared as an IP (CIDR_MATCH) or a date
 * (DATE_EXTRACT): a fixture index maps them so that the query finds every column it names.
 */
export function referencedFields(query: string): Map<string, 'ip' | 'date' | 'any'> {
  const { rest } = parts(query);
  const out = new Map<string, 'ip' | 'date' | 'any'>();
  const stack: string[] = [];
  let i = 0;
  let lastFunction = '';
  while (i < rest.length) {
    const c = rest[i]!;
    if (c === '"') {
      const triple = rest.startsWith('"""', i);
      if (triple) {
        const end = rest.indexOf('"""', i + 3);
        i = end < 0 ? rest.length : end + 3;
        continue;
      }
      i++;
      while (i < rest.length && rest[i] !== '"') i += rest[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '`') {
      let name = '';
      i++;
      while (i < rest.length) {
        if (rest[i] === '`' && rest[i + 1] === '`') {
          name += '`';
          i += 2;
        } else if (rest[i] === '`') break;
        else name += rest[i++];
      }
      i++;
      add(name);
      continue;
    }
    if (c === '(') {
      stack.push(lastFunction);
      lastFunction = '';
      i++;
      continue;
    }
    if (c === ')') {
      stack.pop();
      i++;
      continue;
    }
    const ident = /^[A-Za-z_@][A-Za-z0-9_.@]*/.exec(rest.slice(i));
    if (ident) {
      const word = ident[0];
      i += word.length;
      let j = i;
      while (rest[j] === ' ') j++;
      if (rest[j] === '(') {
        lastFunction = word.toUpperCase();
        continue;
      }
      if (!KEYWORDS.has(word.toLowerCase())) add(word);
      continue;
    }
    i++;
  }
  return out;

  function add(name: string) {
    const fn = stack[stack.length - 1] ?? '';
    const kind = fn === 'CIDR_MATCH' ? 'ip' : fn === 'DATE_EXTRACT' ? 'date' : 'any';
    const prev = out.get(name);
    if (!prev || prev === 'any') out.set(name, kind);
  }
}

/** An ES|QL string literal. */
export function esqlLiteral(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** A field name as ES|QL takes it (backquoted when it is not a plain dotted identifier). */
export function esqlField(name: string): string {
  return /^[A-Za-z_@][A-Za-z0-9_.@]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}
