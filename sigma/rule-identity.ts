import { parseSigma } from './parse';

/** What a rule file is known by: the id and title it is stored under, and what lists filter it by. */
export type RuleIdentity = {
  ruleId: string;
  title: string;
  level: string | null;
  status: string | null;
  tags: string[];
  logsource: Record<string, string>;
};

export type RuleIdentityResult = { ok: true; identity: RuleIdentity } | { ok: false; title: string; details: string[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A file goes by the Sigma rule's own `id`: the correlation's when the file holds one (its base
 * rules travel with it), else the first document's. Storing needs only that the text is Sigma with
 * an id and a title; whether the rule is any good is what lint reports. The registry and the CLI's
 * `sync` both read files this way, so they agree on which rule a file is.
 */
export function readRuleIdentity(text: string): RuleIdentityResult {
  const collection = parseSigma(text);
  const structural = collection.errors.filter((e) => e.code.startsWith('yaml') || e.code === 'document-not-map');
  if (structural.length || collection.documents.length === 0) {
    const details = (structural.length ? structural : collection.errors).slice(0, 20).map((e) => `${e.message} (line ${e.line}, column ${e.column})`);
    return { ok: false, title: 'The rule is not a Sigma YAML document', details: details.length ? details : ['no document found'] };
  }
  const main = collection.documents.find((d) => d.kind === 'correlation') ?? collection.documents[0]!;
  const problems: string[] = [];
  if (typeof main.id !== 'string' || !UUID.test(main.id)) problems.push('the rule needs an `id` that is a UUID');
  if (!main.title || main.title.trim() === '') problems.push('the rule needs a `title`');
  if (problems.length) return { ok: false, title: 'The rule cannot be stored', details: problems };
  const logsource: Record<string, string> = {};
  const source = 'logsource' in main ? main.logsource : undefined;
  for (const [k, v] of Object.entries(source ?? {})) if (typeof v === 'string') logsource[k] = v;
  return {
    ok: true,
    identity: {
      ruleId: main.id!.toLowerCase(),
      title: main.title,
      level: main.level ?? null,
      status: main.status ?? null,
      tags: [...main.tags],
      logsource,
    },
  };
}

/** The field of an identity a JSON pointer into it names (`/tags/2` → `tags`), for messages. */
export function identityFieldOf(pointer: string): string {
  return pointer.slice(1).replace(/\/\d+$/, '');
}
