/**
 * The records people query. Temporal holds the state of every run; these tables hold what the API
 * reads back: who may do what (tenants, tokens), what exists (rules, targets) and what happened
 * (deployments, approvals, audit). One file per group of tables; migrations are generated from
 * this index (`npm run db:generate`).
 */
export * from './tenants';
export * from './rules';
export * from './changes';
export * from './requests';
export * from './notifications';
export * from './detection';
export * from './runs';
export * from './health';
export * from './alert-rollups';
export * from './drift';
export * from './integrations';
