/**
 * A minimal Prometheus registry: counters, gauges and histograms with labels, exposed in the text
 * format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/). Only what detflow
 * records; no summaries or default process metrics. A registry is an object: each process (or test)
 * makes its own, so nothing is shared through module state.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels<L extends string> = Readonly<Record<L, string>>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Default latency buckets in seconds (those of the Prometheus client libraries). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function labelText(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs.length === 0 ? '' : `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

abstract class Metric<L extends string> {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
  ) {
    if (!NAME.test(name)) throw new Error(`Invalid metric name ${name}`);
    for (const l of labelNames) if (!LABEL_NAME.test(l) || l.startsWith('__') || l === 'le') throw new Error(`Invalid label name ${l} of ${name}`);
  }

  /** The label values in declared order; the key of a series. */
  protected key(labels: Labels<L>): string {
    return JSON.stringify(this.labelNames.map((l) => String(labels[l])));
  }

  protected pairs(key: string): Array<readonly [string, string]> {
    const values = JSON.parse(key) as string[];
    return this.labelNames.map((l, i) => [l, values[i]!] as const);
  }

  abstract get type(): 'counter' | 'gauge' | 'histogram';
  abstract samples(): string[];

  expose(): string {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`, ...this.samples()].join('\n');
  }
}

export class Counter<L extends string = never> extends Metric<L> {
  private readonly values = new Map<string, number>();
  get type() {
    return 'counter' as const;
  }

  constructor(name: string, help: string, labelNames: readonly L[]) {
    super(name, help, labelNames);
    // A counter without labels has one series, shown from the start (at 0).
    if (labelNames.length === 0) this.values.set(JSON.stringify([]), 0);
  }

  inc(labels: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new Error(`A counter only goes up (${this.name} by ${by})`);
    const key = this.key(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  /** The current value of one series (0 when it has not been counted yet). */
  get(labels: Labels<L>): number {
    return this.values.get(this.key(labels)) ?? 0;
  }

  samples(): string[] {
    return [...this.values].map(([key, v]) => `${this.name}${labelText(this.pairs(key))} ${formatValue(v)}`);
  }
}

/** A value that goes up and down, set to what was last measured. */
export class Gauge<L extends string = never> extends Metric<L> {
  private readonly values = new Map<string, number>();
  get type() {
    return 'gauge' as const;
  }

  set(labels: Labels<L>, value: number): void {
    this.values.set(this.key(labels), value);
  }

  samples(): string[] {
    return [...this.values].map(([key, v]) => `${this.name}${labelText(this.pairs(key))} ${formatValue(v)}`);
  }
}

type HistogramSeries = { counts: number[]; sum: number; count: number };

export class Histogram<L extends string = never> extends Metric<L> {
  private readonly series = new Map<string, HistogramSeries>();
  readonly buckets: readonly number[];
  get type() {
    return 'histogram' as const;
  }

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[] = DEFAULT_BUCKETS) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels<L>, value: number): void {
    const key = this.key(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const [key, s] of this.series) {
      const pairs = this.pairs(key);
      // Buckets are cumulative: counts[i] already holds every observation <= buckets[i].
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText([...pairs, ['le', formatValue(le)]])} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${labelText([...pairs, ['le', '+Inf']])} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(pairs)} ${formatValue(s.sum)}`);
      lines.push(`${this.name}_count${labelText(pairs)} ${s.count}`);
    }
    return lines;
  }
}

/** The metrics of one process, exposed together. */
export class Registry {
  private readonly metrics = new Map<string, Metric<string>>();

  private add<M extends Metric<string>>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`Metric ${metric.name} is registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.add(new Counter<L>(name, help, labelNames));
  }

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return this.add(new Gauge(name, help, labelNames));
  }

  histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets?: readonly number[]): Histogram<L> {
    return this.add(new Histogram<L>(name, help, labelNames, buckets));
  }

  /** Every metric in the text format 0.0.4, ending with a newline. */
  expose(): string {
    return [...this.metrics.values()].map((m) => m.expose()).join('\n') + '\n';
  }
}
