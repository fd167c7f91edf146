import type { Request, Response } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { type z } from 'zod';
import './zod-openapi';
import type { Permission } from '../../domain/tenants/permissions';
import { type Actor } from '../../domain/tenants/actor';
import type { RouteScope } from './scope';
import { ProblemSchema, fieldErrors } from './problem';
import { invalidRequest } from '../../domain/errors';
import { findUnstorableText } from '../../lib/storable-text';

/**
 * One declaration per endpoint feeds both the Express router (validation, permission check) and the
 * OpenAPI document, so the document cannot drift from what the server enforces.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type RouteResult = {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
};

export type HandlerInput<B, P, Q> = {
  body: B;
  params: P;
  query: Q;
  auth: Actor;
  req: Request;
  res: Response;
};

type ResponseSpec = { description: string; schema?: z.ZodType; contentType?: string };

export type RouteSpec<B = unknown, P = unknown, Q = unknown> = {
  method: HttpMethod;
  /** OpenAPI style path relative to /api/v1, e.g. `/rules/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Who may call it: a permission, or any valid token when undefined. */
  permission?: Permission;
  /** What it touches, checked against the token's environments before the handler runs (see scope.ts). */
  scope: RouteScope | readonly RouteScope[];
  body?: z.ZodType<B>;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  /** A body that is not JSON (e.g. NDJSON), read by the handler from the request stream; documented only. */
  rawBody?: { description: string; content: Record<string, z.ZodType> };
  /** Extra request headers to document (e.g. Idempotency-Key). */
  headers?: z.ZodObject;
  responses: Record<number, ResponseSpec>;
  handler: (input: HandlerInput<B, P, Q>) => Promise<RouteResult>;
};

// Route-specific codes are declared by each route; these can happen on any authenticated route.
const COMMON_ERRORS: Record<number, string> = {
  400: 'The request is malformed or invalid',
  401: 'The token is missing, malformed, unknown, revoked or expired',
  403: 'The token lacks a permission or environment, or a resource limit is reached',
  408: 'The body did not arrive within DETFLOW_BODY_TIMEOUT_SECONDS of the headers; the connection is closed',
  413: 'The body is larger than the limit',
  415: 'The body is not JSON',
  429: 'The tenant reached its daily request limit',
  500: 'An unexpected error; the request id identifies it in the logs',
};

export function defineRoute<B = undefined, P = Record<string, never>, Q = Record<string, never>>(spec: RouteSpec<B, P, Q>): RouteSpec<B, P, Q> {
  return spec;
}

export function expressPath(openapiPath: string): string {
  return openapiPath.replace(/\{([^}]+)\}/g, ':$1');
}

function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, root: 'body' | 'query' | 'params'): T {
  if (!schema) return undefined as T;
  const unstorable = findUnstorableText(value, `/${root}`);
  if (unstorable)
    throw invalidRequest('Text may not contain the NUL character (U+0000) or unpaired UTF-16 surrogates', [{ pointer: unstorable.pointer, message: unstorable.reason }]);
  const result = schema.safeParse(value);
  if (!result.success) {
    throw invalidRequest(`The request ${root === 'body' ? 'body' : root === 'query' ? 'query string' : 'path'} is invalid`, fieldErrors(result.error.issues, root));
  }
  return result.data;
}

export function parseParams<B, P, Q>(spec: RouteSpec<B, P, Q>, req: Request): P {
  return parsePart(spec.params, req.params, 'params');
}

/** The query and body, after the path (parsed first: the object it names is checked before the body is read). */
export function parseRequest<B, P, Q>(spec: RouteSpec<B, P, Q>, req: Request, params: P): { body: B; params: P; query: Q } {
  return {
    params,
    query: parsePart(spec.query, { ...req.query }, 'query'),
    body: parsePart(spec.body, req.body, 'body'),
  };
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per UTC day for the tier', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests remaining today', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'Unix epoch seconds of the next reset (UTC midnight)', schema: { type: 'integer' as const } },
};

export function toOpenApi(spec: RouteSpec<any, any, any>): RouteConfig {
  const responses: RouteConfig['responses'] = {};
  const all: Record<number, ResponseSpec> = {};
  for (const [code, description] of Object.entries(COMMON_ERRORS)) all[Number(code)] = { description, schema: ProblemSchema };
  if (!spec.permission) delete all[403];
  if (!spec.body && !spec.rawBody) (delete all[408], delete all[413], delete all[415]);
  Object.assign(all, spec.responses);
  for (const [code, r] of Object.entries(all)) {
    const isError = Number(code) >= 400;
    const contentType = r.contentType ?? (isError ? 'application/problem+json' : 'application/json');
    responses[code] = {
      description: r.description,
      headers: RATE_LIMIT_HEADERS,
      ...(r.schema ? { content: { [contentType]: { schema: r.schema } } } : {}),
    };
  }
  const request: NonNullable<RouteConfig['request']> = {};
  if (spec.params) request.params = spec.params as z.ZodObject as never;
  if (spec.query) request.query = spec.query as z.ZodObject as never;
  if (spec.headers) request.headers = spec.headers as never;
  if (spec.body) request.body = { required: true, content: { 'application/json': { schema: spec.body } } };
  if (spec.rawBody) {
    const content = Object.fromEntries(Object.entries(spec.rawBody.content).map(([type, schema]) => [type, { schema }]));
    request.body = { required: true, description: spec.rawBody.description, content };
  }
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    tags: [spec.tag],
    security: [{ bearerAuth: [] }],
    // Who may call it and what it touches, for clients and for the test that runs every operation
    // with tokens of every permission and environment scope.
    ...(spec.permission ? { 'x-detflow-permission': spec.permission } : {}),
    'x-detflow-scope': [spec.scope].flat(),
    request,
    responses,
  };
}
