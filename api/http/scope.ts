import type { Db } from '../../db/client';
import type { Actor } from '../../domain/tenants/actor';
import { requireEnvironmentInScope, requireEveryEnvironment, requireObjectInScope, requireTargetsInScope, type ScopedObject } from '../../domain/tenants/scope';

/**
 * What an operation touches, declared beside its permission. One place (`enforceScope`, run for
 * every route before its handler) checks it against the token's environments, so an endpoint
 * cannot forget to: the route declaration requires a scope, and a test runs every declared
 * operation with tokens of every scope.
 */
export type RouteScope =
  /** Tenant data that belongs to no environment (the rule registry, the caller's own keys). */
  | { kind: 'tenant' }
  /** Settings that span every environment (the webhook, the audit log): a token scoped to all of them. */
  | { kind: 'every-environment' }
  /** The service operator's business across tenants (the `operator` permission). */
  | { kind: 'service' }
  /** The object a path parameter names: outside the token's tenant or environments it is not found (404). */
  | { kind: 'object'; object: ScopedObject; param: string }
  /** Targets a request names (a body or query field, one name or a list): outside the token's environments, 403. */
  | { kind: 'targets'; in: 'body' | 'query'; field: string }
  /** The environment a request names (a new target's): outside the token's environments, 403. */
  | { kind: 'environment'; in: 'body'; field: string }
  /** A list: the use case returns only what lies in the token's environments. */
  | { kind: 'list' };

/** Scopes that read the query or body (checked once they are parsed); the others need only the path. */
export const namedInRequest = (scope: RouteScope): boolean => scope.kind === 'targets' || scope.kind === 'environment';

type Parsed = { body: unknown; params: unknown; query: unknown };

const field = (part: unknown, name: string): unknown => (part !== null && typeof part === 'object' ? (part as Record<string, unknown>)[name] : undefined);

export async function enforceScope(db: Db, scope: RouteScope, input: Parsed, actor: Actor): Promise<void> {
  switch (scope.kind) {
    case 'tenant':
    case 'service':
    case 'list':
      return;
    case 'every-environment':
      return requireEveryEnvironment(actor);
    case 'object':
      return requireObjectInScope(db, actor, scope.object, String(field(input.params, scope.param)));
    case 'targets': {
      const value = field(input[scope.in], scope.field);
      const names = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
      return requireTargetsInScope(db, actor, names);
    }
    case 'environment': {
      const value = field(input.body, scope.field);
      if (typeof value === 'string') requireEnvironmentInScope(actor, value);
      return;
    }
  }
}
