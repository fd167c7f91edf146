import { z } from 'zod';
import { DRIFT_KINDS } from '../../db/schema';
import { openapi } from '../http/zod-openapi';

export const Drift = openapi(
  z.object({
    id: z.string(),
    kind: z
      .enum(DRIFT_KINDS)
      .describe(
        'missing (deleted on the target), edited (query changed there), disabled, other_version (another deployment is there), unmanaged (under the naming scheme, deployed by no live deployment)',
      ),
    object: z.string().describe("The object's name on the target"),
    rule_id: z.string().nullable(),
    deployment_id: z.string().nullable().describe('The live deployment the target departs from; null for unmanaged objects'),
    detail: z.string(),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
  }),
  'Drift',
);

export const TargetDrift = openapi(
  z.object({
    target: z.string(),
    checked_at: z.string().nullable().describe('When the last check of this target ran; null when none has'),
    items: z.array(Drift).describe('Open departures, by object'),
  }),
  'TargetDrift',
);
