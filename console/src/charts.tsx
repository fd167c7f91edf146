/** Small inline SVG charts: no charting library, nothing but what the numbers need. */

export function Sparkline({ values, label, budget }: { values: number[]; label: string; budget?: number | null }) {
  const w = 120;
  const h = 28;
  const max = Math.max(1, budget ?? 0, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`).join(' ');
  return (
    <svg class="spark" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={label}>
      <title>{label}</title>
      {budget != null && <line class="budget" x1="0" x2={w} y1={h - 2 - (budget / max) * (h - 4)} y2={h - 2 - (budget / max) * (h - 4)} />}
      {values.length > 0 ? <polyline class="line" points={points} /> : <line class="empty" x1="0" x2={w} y1={h - 2} y2={h - 2} />}
    </svg>
  );
}

export type Bar = { label: string; value: number; low?: number | null; high?: number | null; kind: 'new' | 'current' };

/**
 * Projected alerts/day per target (this version and the live one) with their 95% intervals,
 * against the noise budget drawn as a line.
 */
export function AlertsChart({ bars, budget, title }: { bars: Bar[]; budget: number | null; title: string }) {
  const w = 320;
  const rowH = 26;
  const labelW = 110;
  const h = bars.length * rowH + 22;
  const max = Math.max(1, budget ?? 0, ...bars.map((b) => Math.max(b.value, b.high ?? 0))) * 1.1;
  const x = (v: number) => labelW + (v / max) * (w - labelW - 10);
  const summary = `${title}: ${bars.map((b) => `${b.label} ${b.value}`).join(', ')}${budget != null ? `; noise budget ${budget}` : ''}`;
  return (
    <svg class="chart" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      {bars.map((b, i) => {
        const y = i * rowH + 4;
        return (
          <g key={b.label}>
            <text class="axis" x="0" y={y + 14}>
              {b.label}
            </text>
            <rect class={`bar ${b.kind}`} x={labelW} y={y} width={Math.max(1, x(b.value) - labelW)} height={rowH - 8} />
            {b.low != null && b.high != null && <line class="whisker" x1={x(b.low)} x2={x(b.high)} y1={y + (rowH - 8) / 2} y2={y + (rowH - 8) / 2} />}
            <text class="value" x={Math.min(x(b.value) + 4, w - 40)} y={y + 14}>
              {b.value}
            </text>
          </g>
        );
      })}
      {budget != null && (
        <g>
          <line class="budget" x1={x(budget)} x2={x(budget)} y1="0" y2={h - 18} />
          <text class="axis" x={Math.min(x(budget), w - 90)} y={h - 4}>
            budget {budget}/day
          </text>
        </g>
      )}
    </svg>
  );
}
