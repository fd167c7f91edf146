/**
 * Processing pipelines as plain data: field renames and logsource → target (index, table, search
 * prefix) mappings. Kept free of backend code so they can be tested, diffed and extended alone.
 */
export interface LogsourceMapping {
  readonly category?: string;
  readonly product?: string;
  readonly service?: string;
  /** Index pattern, table or search prefix, depending on the backend. */
  readonly target: string;
  /** Field renames that apply only to this logsource (override the pipeline-wide ones). */
  readonly fields?: Readonly<Record<string, string>>;
  /** What to do with fields that have no mapping: keep the Sigma name, or reject the rule. */
  readonly unmapped?: 'keep' | 'error';
}

export interface Pipeline {
  readonly name: string;
  readonly description: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly logsources: readonly LogsourceMapping[];
  /** Target used when no logsource mapping matches; absent means the rule is rejected. */
  readonly defaultTarget?: string;
  readonly unmapped: 'keep' | 'error';
}
