import { readFileSync } from 'fs';
import { compileRule } from '../../sigma/evaluate';
import { parseSigma } from '../../sigma/parse';
import { corpusFiles, corpusRelative } from './support/corpus';

/**
 * Parses every SigmaHQ rule of the shared corpus (DRL 1.1, read in place). The `unsupported/`
 * folder holds legacy `| count()` rules that must be rejected; everything else must parse.
 */
describe('SigmaHQ corpus', () => {
  const files = corpusFiles();
  const results = files.map((path) => {
    const collection = parseSigma(readFileSync(path, 'utf8'), { source: corpusRelative(path) });
    return { path: corpusRelative(path), errors: collection.errors };
  });
  const failures = results.filter((r) => r.errors.length > 0);

  it('finds the corpus', () => {
    expect(files.length).toBeGreaterThan(400);
  });

  it('parses at least 98% of the files without errors', () => {
    const share = (results.length - failures.length) / results.length;
    // Printed so CI logs show the figure and every failure with its reason.
    console.log(
      `corpus parse: ${results.length - failures.length}/${results.length} (${(share * 100).toFixed(2)}%)\n` +
        failures.map((f) => `  ${f.path}: ${f.errors.map((e) => `[${e.code}] ${e.line}:${e.column} ${e.message}`).join('; ')}`).join('\n'),
    );
    expect(share).toBeGreaterThanOrEqual(0.98);
  });

  it('compiles every parsed rule for local evaluation, except rules waiting for placeholder values', () => {
    const refused: string[] = [];
    for (const path of files) {
      const c = parseSigma(readFileSync(path, 'utf8'));
      if (c.errors.length > 0) continue;
      for (const d of c.documents) {
        if (d.kind !== 'rule') continue;
        try {
          compileRule(d);
        } catch (e) {
          refused.push(`${corpusRelative(path)}: ${(e as { code?: string }).code}`);
        }
      }
    }
    expect(refused.every((r) => r.startsWith('rules-placeholder/') && r.endsWith('placeholder-unresolved'))).toBe(true);
  });

  it('fails only on the legacy rules of unsupported/, for the legacy-syntax reason', () => {
    for (const f of failures) {
      expect(f.path.startsWith('unsupported/')).toBe(true);
      expect(f.errors.map((e) => e.code)).toContain('condition-legacy-aggregation');
    }
    expect(results.filter((r) => r.path.startsWith('unsupported/')).every((r) => r.errors.length > 0)).toBe(true);
  });
});
