import { compileRule } from '../../sigma/evaluate';
import { toDuckDbSql, toSplunk } from '../../sigma/backends';
import { parseRule } from '../../sigma/parse';
import { placeholdersUsed, withPlaceholderValues } from '../../sigma/placeholders';
import { ruleText } from './support/rules';

// Resolving placeholders in the rule model (what detflow does with a target's values) means the
// same as the engine's own `placeholders` option: the OR of the value with each replacement.
describe('placeholder values resolved in the rule', () => {
  const r = parseRule(
    ruleText(
      "    s:\n        User|expand: '%admins%'\n        Host|expand|startswith: '%site%-'\n    other:\n        Image|endswith: '\\\\cmd.exe'\n    condition: s or other",
    ),
  );

  it('lists each placeholder once, where it is first used', () => {
    expect(placeholdersUsed(r).map((p) => p.name)).toEqual(['admins', 'site']);
    expect(placeholdersUsed(r)[0]!.line).toBeGreaterThan(0);
    expect(placeholdersUsed(parseRule(ruleText("    s:\n        User: 'x'\n    condition: s")))).toEqual([]);
  });

  it('expands to an OR of the values, for the evaluator and the backends alike', () => {
    const values = { admins: ['root', 'adm'], site: ['par', 'ber'] };
    const resolved = withPlaceholderValues(r, values);
    expect(placeholdersUsed(resolved)).toEqual([]);
    const match = compileRule(resolved).match;
    expect(match({ User: 'adm', Host: 'ber-07' })).toBe(true);
    expect(match({ User: 'root', Host: 'par-1' })).toBe(true);
    expect(match({ User: 'guest', Host: 'par-1' })).toBe(false);
    expect(match({ User: 'adm', Host: 'lon-1' })).toBe(false);
    // The same as the engine's placeholders option, query for query.
    expect(toSplunk(resolved)).toBe(toSplunk(r, { placeholders: values }));
    expect(toDuckDbSql(resolved)).toContain("'ber-");
  });

  it('refuses a placeholder without a value, naming it at its item', () => {
    expect(() => withPlaceholderValues(r, { admins: ['root'] })).toThrow(
      expect.objectContaining({ code: 'placeholder-unresolved', message: expect.stringContaining('%site%') }),
    );
  });

  it('returns a rule without placeholders as it is', () => {
    const plain = parseRule(ruleText("    s:\n        User: 'x'\n    condition: s"));
    expect(withPlaceholderValues(plain, {})).toBe(plain);
  });
});
