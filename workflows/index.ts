// The worker bundles this module: every workflow the task queue runs is exported from here.
export { DeployWithApproval } from './deploy-with-approval';
export { Notify, Redeliver } from './notify';
export { DetectionRun } from './detection-run';
export { DetectionBatch } from './detection-batch';
export { Rollback } from './rollback';
export { ApplyRetention } from './retention';
export { Replay, ShadowEvaluation } from './replay';
export { DriftCheck } from './drift-check';
export { RestoreDeployment } from './restore-deployment';
export { SettingsChange } from './settings-change';
