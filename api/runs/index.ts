import type { ApiDeps } from '../context';
import { replayRoutes } from './replay.routes';
import { shadowRoutes } from './shadow.routes';

/** Replay and shadow evaluation: rule runs over a target's past and live data. */
export function runRoutes(deps: ApiDeps) {
  return [...replayRoutes(deps), ...shadowRoutes(deps)];
}
