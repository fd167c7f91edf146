/** A unified diff shown side by side, with the YAML of Sigma rules lightly highlighted. */

type Row = { left: string | null; right: string | null; kind: 'same' | 'change' | 'hunk' };

export function sideBySide(unified: string): Row[] {
  const rows: Row[] = [];
  let dels: string[] = [];
  let adds: string[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) rows.push({ left: dels[i] ?? null, right: adds[i] ?? null, kind: 'change' });
    dels = [];
    adds = [];
  };
  for (const line of unified.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++') || line.startsWith('Index:') || line.startsWith('====')) continue;
    if (line.startsWith('@@')) {
      flush();
      rows.push({ left: line, right: line, kind: 'hunk' });
    } else if (line.startsWith('-')) dels.push(line.slice(1));
    else if (line.startsWith('+')) adds.push(line.slice(1));
    else if (line.startsWith(' ')) {
      flush();
      rows.push({ left: line.slice(1), right: line.slice(1), kind: 'same' });
    }
  }
  flush();
  return rows;
}

const TOKEN = /(#.*$)|('(?:[^']|'')*'|"(?:[^"\\]|\\.)*")|(^\s*-\s)|(^\s*[\w.|-]+(?=:))|((?<![\w-])\d+(?:\.\d+)?(?![\w-]))/g;

/** YAML tokens as spans (text nodes only: nothing of the rule is parsed as markup). */
export function Yaml({ text }: { text: string }) {
  const parts: preact.ComponentChild[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    const cls = m[1] ? 'c' : m[2] ? 's' : m[3] ? 'p' : m[4] ? 'k' : 'n';
    parts.push(<span class={`hl-${cls}`}>{m[0]}</span>);
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return <>{parts}</>;
}

export function DiffView({ diff, left = 'live', right = 'this version' }: { diff: string; left?: string; right?: string }) {
  const rows = sideBySide(diff);
  if (rows.length === 0) return <p class="muted">No change.</p>;
  return (
    <div class="diff-wrap" tabIndex={0} role="region" aria-label={`Diff: ${left} against ${right}`}>
      <table class="diff">
        <thead>
          <tr>
            <th scope="col">{left}</th>
            <th scope="col">{right}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) =>
            r.kind === 'hunk' ? (
              <tr key={i} class="hunk">
                <td colSpan={2}>{r.left}</td>
              </tr>
            ) : (
              <tr key={i}>
                <td class={r.kind === 'change' ? (r.left === null ? 'blank' : 'del') : ''}>{r.left !== null && <Yaml text={r.left} />}</td>
                <td class={r.kind === 'change' ? (r.right === null ? 'blank' : 'add') : ''}>{r.right !== null && <Yaml text={r.right} />}</td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
