import { compileRule, type CompileOptions } from '../evaluate';
import { SigmaError } from '../errors';
import type { SigmaDocument, SigmaRule } from '../model';
import { applyPipeline, ELASTIC_ECS, SENTINEL, SPLUNK_CIM, type Pipeline } from '../pipelines';
import type { ConvertOptions } from './base';
import { EsqlBackend, type EsqlOptions } from './esql';
import { KqlBackend, type KqlOptions } from './kql';
import { LuceneBackend, type LuceneOptions } from './lucene';
import { SplunkBackend, type SplunkOptions } from './splunk';
import { SqlBackend, type SqlOptions } from './sql';

export { QueryBackend, shapeOf, type ConvertOptions } from './base';
export { SqlBackend, toDuckDbSql, defaultFieldExpression, likePattern, type SqlOptions } from './sql';
export { SplunkBackend, toSplunk, type SplunkOptions } from './splunk';
export { EsqlBackend, toEsql, toLuceneRegex, type EsqlOptions } from './esql';
export { LuceneBackend, toLucene, type LuceneOptions } from './lucene';
export { KqlBackend, toKql, type KqlOptions } from './kql';

export type BackendName = 'sql' | 'splunk' | 'esql' | 'lucene' | 'kql';

export interface TargetOptions extends ConvertOptions {
  /** Field/logsource pipeline applied before conversion (none for `sql` by default). */
  readonly pipeline?: Pipeline;
  readonly sql?: Omit<SqlOptions, keyof ConvertOptions>;
  readonly lucene?: Omit<LuceneOptions, keyof ConvertOptions>;
}

/**
 * One entry point for every backend. With a pipeline, fields are renamed first and the logsource
 * target becomes the Splunk prefix / ES|QL index / KQL table.
 */
export function convertRule(rule: SigmaRule, backend: BackendName, options: TargetOptions = {}): string {
  let target: string | undefined;
  let r = rule;
  if (options.pipeline) ({ rule: r, target } = applyPipeline(rule, options.pipeline));
  const base: ConvertOptions = options.placeholders ? { placeholders: options.placeholders } : {};
  switch (backend) {
    case 'sql':
      return new SqlBackend().convert(r, { ...base, ...options.sql });
    case 'splunk':
      return new SplunkBackend().convert(r, { ...base, ...(target !== undefined ? { prefix: target } : {}) } satisfies SplunkOptions);
    case 'esql':
      return new EsqlBackend().convert(r, { ...base, ...(target !== undefined ? { index: target } : {}) } satisfies EsqlOptions);
    case 'lucene':
      return new LuceneBackend().convert(r, { ...base, ...options.lucene });
    case 'kql':
      return new KqlBackend().convert(r, { ...base, ...(target !== undefined ? { table: target } : {}) } satisfies KqlOptions);
  }
}

export type TargetKind = 'local' | 'splunk' | 'elastic' | 'sentinel';

export interface TargetPortability {
  readonly expressible: boolean;
  /** Why not (error messages with positions); empty when expressible. */
  readonly reasons: string[];
}

export interface Portability {
  readonly targets: Record<TargetKind, TargetPortability>;
  /** Share of target kinds that can express the rule exactly, 0..1. */
  readonly score: number;
}

export interface PortabilityOptions {
  readonly placeholders?: CompileOptions['placeholders'];
}

/** How each remote target kind is compiled: its backend and its field-mapping pipeline. */
export const TARGETS: Record<Exclude<TargetKind, 'local'>, { backend: BackendName; pipeline: Pipeline }> = {
  splunk: { backend: 'splunk', pipeline: SPLUNK_CIM },
  elastic: { backend: 'esql', pipeline: ELASTIC_ECS },
  sentinel: { backend: 'kql', pipeline: SENTINEL },
};

function attempt(fn: () => unknown): TargetPortability {
  try {
    fn();
    return { expressible: true, reasons: [] };
  } catch (e) {
    if (e instanceof SigmaError) return { expressible: false, reasons: [`${e.line}:${e.column} [${e.code}] ${e.message}`] };
    throw e;
  }
}

/** For each target kind, whether the rule converts exactly (local = the in-process evaluator). */
export function portability(doc: SigmaDocument, options: PortabilityOptions = {}): Portability {
  const placeholders = options.placeholders ? { placeholders: options.placeholders } : {};
  let targets: Record<TargetKind, TargetPortability>;
  if (doc.kind !== 'rule') {
    const no = { expressible: false, reasons: [`${doc.kind} documents are not converted to queries`] };
    const local = doc.kind === 'correlation' ? { expressible: true, reasons: [] } : no;
    targets = { local, splunk: no, elastic: no, sentinel: no };
  } else {
    targets = {
      local: attempt(() => compileRule(doc, placeholders)),
      splunk: attempt(() => convertRule(doc, TARGETS.splunk.backend, { pipeline: TARGETS.splunk.pipeline, ...placeholders })),
      elastic: attempt(() => convertRule(doc, TARGETS.elastic.backend, { pipeline: TARGETS.elastic.pipeline, ...placeholders })),
      sentinel: attempt(() => convertRule(doc, TARGETS.sentinel.backend, { pipeline: TARGETS.sentinel.pipeline, ...placeholders })),
    };
  }
  const values = Object.values(targets);
  return { targets, score: values.filter((t) => t.expressible).length / values.length };
}
