import { compileRule } from '../../sigma/evaluate';
import { applyFilters } from '../../sigma/filters';
import type { SigmaFilter, SigmaRule } from '../../sigma/model';
import { parseSigma } from '../../sigma/parse';
import { toSplunk } from '../../sigma/backends';

const text = `title: Rar usage
id: 6f3e2987-db24-4c78-a860-b4f4095a7095
logsource:
    category: process_creation
    product: windows
detection:
    selection:
        Image|endswith: '\\rar.exe'
    condition: selection
---
title: Filter Administrator account
logsource:
    category: process_creation
    product: windows
filter:
    rules:
        - 6f3e2987-db24-4c78-a860-b4f4095a7095
    selection:
        User|startswith: 'adm_'
    condition: not selection
---
title: Filter for another rule
filter:
    rules:
        - some-other-rule
    selection:
        User: x
    condition: not selection
`;

describe('meta-filters', () => {
  const c = parseSigma(text);
  const rule = c.documents[0] as SigmaRule;
  const filters = c.documents.filter((d): d is SigmaFilter => d.kind === 'filter');

  it('parses without errors', () => expect(c.errors).toEqual([]));

  it('ANDs the filter condition into the rules it names', () => {
    const filtered = applyFilters(rule, filters);
    expect([...filtered.detection.identifiers.keys()]).toEqual(['selection', '_filt_0_selection']);
    const m = compileRule(filtered).match;
    expect(m({ Image: 'C:\\rar.exe', User: 'bob' })).toBe(true);
    expect(m({ Image: 'C:\\rar.exe', User: 'adm_bob' })).toBe(false);
    expect(toSplunk(filtered)).toBe('Image="*\\\\rar.exe" NOT User="adm_*"');
  });

  it('leaves rules that no filter names unchanged', () => {
    expect(applyFilters(rule, filters.slice(1))).toBe(rule);
  });
});
