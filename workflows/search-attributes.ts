import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Every run carries these, so an operator can filter runs in the Temporal UI, e.g.
 * `DetflowRuleId = "…" AND DetflowStatus = "pending_approval"`.
 */
export const TENANT = defineSearchAttributeKey('DetflowTenant', SearchAttributeType.KEYWORD);
export const RULE_ID = defineSearchAttributeKey('DetflowRuleId', SearchAttributeType.KEYWORD);
export const TARGET = defineSearchAttributeKey('DetflowTarget', SearchAttributeType.KEYWORD);
export const KIND = defineSearchAttributeKey('DetflowKind', SearchAttributeType.KEYWORD);
export const STATUS = defineSearchAttributeKey('DetflowStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [TENANT, RULE_ID, TARGET, KIND, STATUS] as const;
