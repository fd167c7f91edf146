import type { SigmaRule } from '../../sigma';
import type { SiemAdapter } from '../../siem/adapter';
import { adapterFor, TargetMisconfigured, UnsupportedTargetKind, type SiemAdapters, type TargetRef } from '../../siem/adapters';
import { conflict, invalidRequest } from '../errors';

/**
 * A target's adapter for a request: a kind without an adapter is the request's problem (400 at
 * `pointer`); stored settings the kind refuses are the target's state (409, with what to fix).
 */
export function adapterForRequest(siem: SiemAdapters, target: TargetRef, pointer: string): SiemAdapter<SigmaRule> {
  try {
    return adapterFor(siem, target);
  } catch (err) {
    if (err instanceof UnsupportedTargetKind) throw invalidRequest(err.message, [{ pointer, message: 'unsupported target kind' }]);
    if (err instanceof TargetMisconfigured) throw conflict(`${err.message}; correct it with PUT /settings/targets/${target.name}`);
    throw err;
  }
}
