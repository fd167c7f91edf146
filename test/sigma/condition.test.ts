import { formatCondition, parseCondition, referencedNames, resolveSelector } from '../../sigma/condition';
import { SigmaError } from '../../sigma/errors';

const names = ['selection', 'sel_a', 'sel_b', 'filter_main', 'filter_optional_x', '_internal', 'keywords'];
const fmt = (text: string): string => formatCondition(parseCondition(text, names));

function errorOf(fn: () => unknown): SigmaError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SigmaError) return e;
    throw e;
  }
  throw new Error('expected a SigmaError');
}

describe('condition grammar', () => {
  it('parses a single identifier', () => {
    expect(parseCondition('selection', names)).toMatchObject({ kind: 'ref', name: 'selection' });
  });

  it('binds and tighter than or', () => {
    expect(fmt('sel_a or sel_b and selection')).toBe('(sel_a or (sel_b and selection))');
  });

  it('binds not tighter than and', () => {
    expect(fmt('not sel_a and sel_b')).toBe('(not sel_a and sel_b)');
  });

  it('nests not (right-associative)', () => {
    expect(fmt('not not selection')).toBe('not not selection');
  });

  it('honours parentheses', () => {
    expect(fmt('(sel_a or sel_b) and not (filter_main or keywords)')).toBe('((sel_a or sel_b) and not (filter_main or keywords))');
  });

  it('flattens chains of the same operator', () => {
    const ast = parseCondition('sel_a and sel_b and selection', names);
    expect(ast.kind).toBe('and');
    expect(ast.kind === 'and' && ast.operands).toHaveLength(3);
  });

  it('resolves 1 of pattern to matching identifiers', () => {
    expect(parseCondition('1 of sel_*', names)).toMatchObject({ kind: 'of', quantifier: 'any', targets: ['sel_a', 'sel_b'] });
  });

  it('accepts any of as a synonym of 1 of', () => {
    expect(parseCondition('any of sel_*', names)).toMatchObject({ kind: 'of', quantifier: 'any' });
  });

  it('resolves all of pattern', () => {
    expect(parseCondition('all of filter_*', names)).toMatchObject({ quantifier: 'all', targets: ['filter_main', 'filter_optional_x'] });
  });

  it('excludes _-prefixed identifiers from them', () => {
    const ast = parseCondition('1 of them', names);
    expect(ast).toMatchObject({ kind: 'of', them: true });
    expect(ast.kind === 'of' && ast.targets).not.toContain('_internal');
    expect(fmt('all of them')).toBe('all of them');
  });

  it('includes _-prefixed identifiers only for patterns starting with _', () => {
    expect(resolveSelector('*', false, names)).not.toContain('_internal');
    expect(resolveSelector('_*', false, names)).toEqual(['_internal']);
  });

  it('binds x of tighter than not and and', () => {
    expect(fmt('selection and not 1 of filter_*')).toBe('(selection and not 1 of filter_*)');
  });

  it('reports undefined identifiers with their column', () => {
    const e = errorOf(() => parseCondition('selection and nope', names, { basePos: { line: 7, column: 16 } }));
    expect(e.code).toBe('condition-undefined-identifier');
    expect([e.line, e.column]).toEqual([7, 30]);
  });

  it('rejects a selector that matches nothing', () => {
    expect(errorOf(() => parseCondition('1 of zzz*', names)).code).toBe('condition-pattern-no-match');
  });

  it('rejects unbalanced parentheses', () => {
    expect(errorOf(() => parseCondition('(selection or sel_a', names)).code).toBe('condition-syntax');
    expect(errorOf(() => parseCondition('selection)', names)).code).toBe('condition-syntax');
  });

  it('rejects dangling operators and empty input', () => {
    expect(errorOf(() => parseCondition('selection and', names)).code).toBe('condition-syntax');
    expect(errorOf(() => parseCondition('', names)).code).toBe('condition-syntax');
    expect(errorOf(() => parseCondition('and selection', names)).code).toBe('condition-syntax');
  });

  it('rejects wildcards outside selectors', () => {
    expect(errorOf(() => parseCondition('sel_*', names)).code).toBe('condition-syntax');
  });

  it('rejects uppercase operators as unknown identifiers', () => {
    expect(errorOf(() => parseCondition('sel_a AND sel_b', names)).code).toBe('condition-syntax');
  });

  it('rejects the legacy aggregation syntax at the pipe', () => {
    const e = errorOf(() => parseCondition('selection | count() by x > 5', names));
    expect(e.code).toBe('condition-legacy-aggregation');
    expect(e.column).toBe(11);
    expect(errorOf(() => parseCondition('sel_a | near sel_b', names)).code).toBe('condition-legacy-aggregation');
  });

  it('collects referenced names through selectors', () => {
    expect([...referencedNames(parseCondition('selection and not 1 of filter_*', names))].sort()).toEqual(['filter_main', 'filter_optional_x', 'selection']);
  });
});
