import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Done once, before any schema is built, so every schema can carry OpenAPI metadata.
extendZodWithOpenApi(z);

/** Names a schema as a reusable OpenAPI component. */
export function openapi<T extends z.ZodType>(schema: T, refId: string): T {
  return schema.openapi(refId) as T;
}
