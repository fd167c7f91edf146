/**
 * Rule tests (`POST /api/v1/rules/test`) without the I/O: fixture validation, coverage of a rule by
 * its fixtures and the quality of the suite. Running fixtures on a target stays with the caller.
 */
export { parseFixtures, type Fixture, type FixtureError, type FixtureExpectation, type FixtureParseOptions, type FixtureParseResult } from './fixtures';
export { analyseCoverage, type BranchCoverageItem, type Coverage, type CoverageSection, type SelectionCoverageItem, type ValueCoverageItem } from './coverage';
export { analyseQuality, type QualityCode, type QualityFinding } from './quality';
export { resolveTarget, type AnalysisOptions, type BaseRule, type ResolvedTarget, type TestTarget } from './targets';
export { untestableCategory, untestableCategoriesFor, untestableLintCodes, type UntestableCategory } from './untestable';
