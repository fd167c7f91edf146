import { metadataValidators } from '../lint/metadata';
import { performanceValidators } from '../lint/performance';
import { tagValidators } from '../lint/tags';
import type { Validator } from '../lint/types';
import type { SigmaDocument } from '../model';

/**
 * Lint findings that no fixture can catch: they are about metadata, tags, cost or style, or they
 * concern field names and logsources that fixtures written from the rule repeat verbatim. A test
 * suite passing says nothing about them, so the quality report passes them through.
 *
 * Findings left out are the ones a failing test can expose (an identifier the condition forgot, a
 * control character, escaped wildcards, invalid modifier combinations, hash values, regex
 * constructs a target rejects, correlation structure) and parse errors (the rule does not run).
 */
export type UntestableCategory = 'metadata' | 'tags' | 'performance' | 'logsource' | 'style';

const CATEGORIES: Readonly<Record<UntestableCategory, readonly string[]>> = {
  // Everything sigma/lint/metadata.ts reports, plus the cross-file checks of sigma/lint/index.ts.
  metadata: [
    'identifier_existence',
    'sigmahq_status_existence',
    'sigmahq_level_existence',
    'sigmahq_date_existence',
    'sigmahq_author_existence',
    'sigmahq_description_existence',
    'custom_attributes',
    'date_in_future',
    'duplicate_references',
    'filename_length',
    'sigmahq_description_length',
    'sigmahq_falsepositives_banned_word',
    'sigmahq_falsepositives_capital',
    'sigmahq_filename_convention',
    'sigmahq_github_link',
    'sigmahq_link_in_description',
    'sigmahq_mitre_link',
    'sigmahq_modified_date_order',
    'sigmahq_modified_without_date',
    'sigmahq_redundant_modified',
    'sigmahq_status_to_high',
    'sigmahq_title_end',
    'sigmahq_title_length',
    'sigmahq_title_start',
    'identifier_uniqueness',
    'duplicate_title',
  ],
  // Everything sigma/lint/tags.ts reports (ATT&CK, TLP, namespaces).
  tags: [
    'attacktag',
    'cartag',
    'cvetag',
    'd3_fendtag',
    'detectiontag',
    'stptag',
    'tlptag',
    'duplicate_tag',
    'namespace_tag',
    'sigmahq_tags_techniques_without_tactics',
    'sigmahq_tags_unique_detection',
    'sigmahq_tags_unique_tlp',
    'tag_format',
  ],
  // Everything sigma/lint/performance.ts reports, and catastrophic regexes (cost, not verdicts).
  performance: [
    'perf_keyword_search',
    'perf_contains_high_volume_field',
    'perf_large_value_list',
    'perf_leading_wildcard',
    'perf_regex_high_volume_field',
    'regex_catastrophic_backtracking',
  ],
  // Field names and logsources: fixtures copy the rule's names, so a wrong name passes its tests.
  logsource: ['fieldname_logsource', 'specific_instead_of_generic_logsource', 'sigmahq_category_event_id', 'sigmahq_field_user', 'sigmahq_space_field_name'],
  // Same verdicts either way: redundancy and spelling of values and conditions.
  style: [
    'double_wildcard',
    'wildcards_instead_of_modifiers',
    'number_as_string',
    'sigmahq_field_duplicate_value',
    'all_of_them_condition',
    'them_condition_with_single_detection',
    'sigmahq_missing_asterisk_condition',
  ],
};

const BY_CODE = new Map<string, UntestableCategory>(
  (Object.entries(CATEGORIES) as Array<[UntestableCategory, readonly string[]]>).flatMap(([category, codes]) => codes.map((c) => [c, category] as const)),
);

/** The category of a lint code fixtures cannot catch, or undefined when tests can catch it. */
export function untestableCategory(code: string): UntestableCategory | undefined {
  return BY_CODE.get(code);
}

export function untestableLintCodes(): ReadonlyMap<string, UntestableCategory> {
  return BY_CODE;
}

const GROUPS: ReadonlyArray<readonly [UntestableCategory, readonly Validator[]]> = [
  ['metadata', metadataValidators],
  ['tags', tagValidators],
  ['performance', performanceValidators],
];

/**
 * The categories for one document: the fixed list, plus every code the metadata, tag and performance
 * validators report for it, so a code added to those validators later is still passed through.
 */
export function untestableCategoriesFor(document: SigmaDocument): (code: string) => UntestableCategory | undefined {
  const found = new Map<string, UntestableCategory>();
  for (const [category, validators] of GROUPS) for (const v of validators) for (const f of v.run({ document })) found.set(f.code, category);
  return (code) => BY_CODE.get(code) ?? found.get(code);
}
