import type { SourcePosition } from '../errors';
import type { RelatedRule, SigmaLevel, SigmaStatus } from '../model';
import type { YMap } from '../yamltree';
import { stringAttr, stringListAttr } from './attributes';
import type { DocumentContext } from './document-context';
import { isNull, isSeq, toPlain, type Pair } from './yaml-nodes';

/** The attributes every document kind shares (title, id, status, tags, related, ...). */

const STATUSES: readonly SigmaStatus[] = ['stable', 'test', 'experimental', 'deprecated', 'unsupported'];
const LEVELS: readonly SigmaLevel[] = ['informational', 'low', 'medium', 'high', 'critical'];
const RELATED_TYPES = ['derived', 'obsolete', 'merged', 'renamed', 'similar', 'correlation'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const COMMON_KEYS = new Set([
  'title',
  'id',
  'name',
  'status',
  'description',
  'author',
  'license',
  'references',
  'date',
  'modified',
  'tags',
  'level',
  'falsepositives',
  'related',
  'taxonomy',
]);

/** pySigma accepts YYYY-MM-DD and YYYY/M/D; both are normalised to ISO form. */
export function normaliseDate(text: string): string | undefined {
  const m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  return `${m[1]}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

export interface CommonFields {
  title: string;
  id?: string;
  name?: string;
  status?: SigmaStatus;
  description?: string;
  author?: string;
  license?: string;
  references: string[];
  date?: string;
  modified?: string;
  tags: string[];
  level?: SigmaLevel;
  falsepositives: string[];
  related: RelatedRule[];
  taxonomy: string;
  custom: Record<string, unknown>;
  positions: Record<string, SourcePosition>;
  pos: SourcePosition;
  source?: string;
}

export function parseCommon(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>, knownKeys: ReadonlySet<string>): CommonFields {
  const positions: Record<string, SourcePosition> = {};
  const custom: Record<string, unknown> = {};
  for (const [key, pair] of entries) {
    positions[key] = ctx.pos(pair);
    if (!knownKeys.has(key)) custom[key] = toPlain(pair.value);
  }
  const rootPos = ctx.pos(root);
  const title = stringAttr(ctx, entries.get('title'), 'title');
  if (title === undefined && !entries.has('title')) ctx.error('attribute-missing', "required attribute 'title' is missing", rootPos);
  if (title !== undefined && title.length > 256) ctx.error('attribute-invalid', "'title' is longer than 256 characters", positions.title!);

  const id = stringAttr(ctx, entries.get('id'), 'id');
  if (id !== undefined && !UUID_RE.test(id)) ctx.error('attribute-invalid', `'id' is not a UUID: ${id}`, positions.id!);

  const name = stringAttr(ctx, entries.get('name'), 'name');
  if (name !== undefined && name.trim() === '') ctx.error('attribute-invalid', "'name' must not be empty", positions.name!);

  let status: SigmaStatus | undefined;
  const statusText = stringAttr(ctx, entries.get('status'), 'status');
  if (statusText !== undefined) {
    const s = statusText.toLowerCase() as SigmaStatus;
    if (STATUSES.includes(s)) status = s;
    else ctx.error('attribute-invalid', `'status' must be one of ${STATUSES.join(', ')}`, positions.status!);
  }
  let level: SigmaLevel | undefined;
  const levelText = stringAttr(ctx, entries.get('level'), 'level');
  if (levelText !== undefined) {
    const l = levelText.toLowerCase() as SigmaLevel;
    if (LEVELS.includes(l)) level = l;
    else ctx.error('attribute-invalid', `'level' must be one of ${LEVELS.join(', ')}`, positions.level!);
  }
  const description = stringAttr(ctx, entries.get('description'), 'description');
  if (description !== undefined && description.length > 65_535) {
    ctx.error('attribute-invalid', "'description' is longer than 65535 characters", positions.description!);
  }
  const dates: { date?: string; modified?: string } = {};
  for (const key of ['date', 'modified'] as const) {
    const text = stringAttr(ctx, entries.get(key), key);
    if (text === undefined) continue;
    const iso = normaliseDate(text);
    if (iso) dates[key] = iso;
    else ctx.error('attribute-invalid', `'${key}' must be a date (YYYY-MM-DD): ${text}`, positions[key]!);
  }
  const tags = stringListAttr(ctx, entries.get('tags'), 'tags');
  const tagsNode = entries.get('tags')?.value;
  if (isSeq(tagsNode)) tagsNode.items.forEach((item, i) => (positions[`tags[${i}]`] = ctx.pos(item)));
  tags.forEach((tag, i) => {
    if (!tag.includes('.')) {
      const item = isSeq(tagsNode) ? tagsNode.items[i] : undefined;
      const at = item ? ctx.pos(item) : positions.tags!;
      ctx.error('attribute-invalid', `tag '${tag}' must be namespace.name`, at);
    }
  });
  const related: RelatedRule[] = [];
  const relatedNode = entries.get('related')?.value;
  if (!isNull(relatedNode) && relatedNode) {
    if (!isSeq(relatedNode)) ctx.error('attribute-invalid', "'related' must be a list of {id, type}", ctx.pos(relatedNode));
    else {
      for (const item of relatedNode.items) {
        const plain = toPlain(item) as { id?: unknown; type?: unknown } | null;
        if (!plain || typeof plain !== 'object' || typeof plain.id !== 'string' || typeof plain.type !== 'string') {
          ctx.error('attribute-invalid', "'related' entries need string 'id' and 'type'", ctx.pos(item));
          continue;
        }
        if (!UUID_RE.test(plain.id)) ctx.error('attribute-invalid', `related id is not a UUID: ${plain.id}`, ctx.pos(item));
        if (!RELATED_TYPES.includes(plain.type)) {
          ctx.error('attribute-invalid', `related type '${plain.type}' must be one of ${RELATED_TYPES.join(', ')}`, ctx.pos(item));
        }
        related.push({ id: plain.id, type: plain.type });
      }
    }
  }
  const common: CommonFields = {
    title: title ?? '',
    references: stringListAttr(ctx, entries.get('references'), 'references'),
    tags,
    falsepositives: stringListAttr(ctx, entries.get('falsepositives'), 'falsepositives'),
    related,
    taxonomy: stringAttr(ctx, entries.get('taxonomy'), 'taxonomy') ?? 'sigma',
    custom,
    positions,
    pos: rootPos,
  };
  if (ctx.source !== undefined) common.source = ctx.source;
  const optional = { id, name, status, description, level, license: stringAttr(ctx, entries.get('license'), 'license'), ...dates };
  const author = stringAttr(ctx, entries.get('author'), 'author');
  for (const [k, v] of Object.entries({ ...optional, author })) {
    if (v !== undefined) (common as unknown as Record<string, unknown>)[k] = v;
  }
  return common;
}
