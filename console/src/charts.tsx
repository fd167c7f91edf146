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

export type Day = { day: string; alerts: number };

/**
 * The replay's matches per UTC day (bars, this version) with the live version's per day (dots),
 * against the noise budget drawn as a line. Days over the budget are marked.
 */
export function DailyChart({ days, live, budget, title }: { days: Day[]; live: Day[] | null; budget: number | null; title: string }) {
  const w = 320;
  const h = 120;
  const top = 8;
  const bottom = 20;
  const left = 26;
  const plotH = h - top - bottom;
  const max = Math.max(1, budget ?? 0, ...days.map((d) => d.alerts), ...(live ?? []).map((d) => d.alerts)) * 1.1;
  const slot = (w - left - 4) / Math.max(1, days.length);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const liveByDay = new Map((live ?? []).map((d) => [d.day, d.alerts]));
  const over = budget == null ? [] : days.filter((d) => d.alerts > budget);
  const summary =
    `${title}: ${days.map((d) => `${d.day.slice(5)} ${d.alerts}${liveByDay.has(d.day) ? ` (live ${liveByDay.get(d.day)})` : ''}`).join(', ')}` +
    (budget != null ? `; noise budget ${budget}/day, ${over.length} day(s) over` : '');
  return (
    <svg class="chart daily" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      <text class="axis" x="0" y={top + 8}>
        {Math.round(max)}
      </text>
      <text class="axis" x="0" y={top + plotH}>
        0
      </text>
      <line class="baseline" x1={left} x2={w - 4} y1={top + plotH} y2={top + plotH} />
      {days.map((d, i) => {
        const x = left + i * slot;
        const liveValue = liveByDay.get(d.day);
        return (
          <g key={d.day}>
            <rect
              class={`bar new${budget != null && d.alerts > budget ? ' over' : ''}`}
              x={x + slot * 0.15}
              y={y(d.alerts)}
              width={slot * 0.7}
              height={Math.max(0, top + plotH - y(d.alerts))}
            />
            {liveValue != null && <circle class="live" cx={x + slot / 2} cy={y(liveValue)} r="3" />}
            <text class="axis" x={x + slot / 2} y={h - 6} text-anchor="middle">
              {d.day.slice(8)}
            </text>
          </g>
        );
      })}
      {budget != null && <line class="budget" x1={left} x2={w - 4} y1={y(budget)} y2={y(budget)} />}
    </svg>
  );
}

export type Point = { label: string; value: number | null };

/** A figure over consecutive periods: a line through the known points; unknown periods leave a gap. */
export function TrendChart({ points, title, format }: { points: Point[]; title: string; format: (v: number) => string }) {
  const w = 320;
  const h = 110;
  const top = 14;
  const bottom = 20;
  const plotH = h - top - bottom;
  const known = points.map((p) => p.value).filter((v): v is number => v !== null);
  const max = Math.max(Number.EPSILON, ...known) * 1.15;
  const slot = (w - 8) / Math.max(1, points.length);
  const x = (i: number) => 4 + slot * i + slot / 2;
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const summary = `${title}: ${points.map((p) => `${p.label} ${p.value === null ? 'unknown' : format(p.value)}`).join(', ')}`;
  const segments: string[] = [];
  let run: string[] = [];
  points.forEach((p, i) => {
    if (p.value === null) {
      if (run.length) segments.push(run.join(' '));
      run = [];
    } else run.push(`${x(i).toFixed(1)},${y(p.value).toFixed(1)}`);
  });
  if (run.length) segments.push(run.join(' '));
  return (
    <svg class="chart trend" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      <line class="baseline" x1="4" x2={w - 4} y1={top + plotH} y2={top + plotH} />
      {segments.map((s) => (
        <polyline key={s} class="line" points={s} />
      ))}
      {points.map((p, i) => (
        <g key={p.label}>
          {p.value !== null && (
            <>
              <circle class="dot" cx={x(i)} cy={y(p.value)} r="3" />
              <text class="value" x={x(i)} y={y(p.value) - 6} text-anchor="middle">
                {format(p.value)}
              </text>
            </>
          )}
          <text class="axis" x={x(i)} y={h - 6} text-anchor="middle">
            {p.label}
          </text>
        </g>
      ))}
    </svg>
  );
}

export type Stack = { label: string; parts: number[] };

/** Horizontal bars, each split into its parts (one colour per key, named in the legend). */
export function StackedBars({ rows, keys, title, tones }: { rows: Stack[]; keys: string[]; title: string; tones?: string[] }) {
  const tone = (i: number) => tones?.[i] ?? `p${i}`;
  const w = 360;
  const rowH = 24;
  const labelW = 120;
  const legendH = 20;
  const h = rows.length * rowH + legendH + 4;
  const max = Math.max(1, ...rows.map((r) => r.parts.reduce((a, b) => a + Math.max(0, b), 0)));
  const scale = (v: number) => (Math.max(0, v) / max) * (w - labelW - 40);
  // Each legend entry after the one before it (11-pixel text, about 7 pixels a character).
  const legendX = keys.reduce<number[]>((xs, k, i) => [...xs, i === 0 ? 0 : xs[i - 1]! + 14 + keys[i - 1]!.length * 7 + 14], []);
  const summary = `${title}: ${rows.map((r) => `${r.label} ${keys.map((k, i) => `${r.parts[i] ?? 0} ${k}`).join(', ')}`).join('; ')}`;
  return (
    <svg class="chart stacked" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      {keys.map((k, i) => (
        <g key={k}>
          <rect class={`part ${tone(i)}`} x={legendX[i]} y="4" width="10" height="10" />
          <text class="axis" x={legendX[i]! + 14} y="13">
            {k}
          </text>
        </g>
      ))}
      {rows.map((r, row) => {
        const y = legendH + row * rowH;
        let at = labelW;
        return (
          <g key={r.label}>
            <text class="axis" x="0" y={y + 14}>
              {r.label.length > 18 ? `${r.label.slice(0, 17)}…` : r.label}
            </text>
            {r.parts.map((v, i) => {
              const width = scale(v);
              const rect = <rect key={i} class={`part ${tone(i)}`} x={at} y={y + 2} width={width} height={rowH - 8} />;
              at += width;
              return rect;
            })}
            <text class="value" x={at + 4} y={y + 14}>
              {r.parts.reduce((a, b) => a + b, 0)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
