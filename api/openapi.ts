import { OpenAPIRegistry, OpenApiGeneratorV3, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { toOpenApi, type RouteSpec } from './http/route';

/**
 * The OpenAPI versions published: 3.0.3 at openapi.json (what most generators and the contract
 * tests read), 3.1.0 at openapi-3.1.json (JSON Schema 2020-12, for tools that want it). Both come
 * from the same registry, so they describe the same operations and schemas.
 */
export type OpenApiVersion = '3.0.3' | '3.1.0';

/** The OpenAPI document, generated from the same route declarations the server enforces. */
export function buildOpenApiDocument(routes: RouteSpec<any, any, any>[], serverUrl: string, version: OpenApiVersion = '3.0.3') {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A detflow API token: dfw_ followed by 38 base62 characters',
  });
  for (const route of routes) registry.registerPath(toOpenApi(route));
  const config = {
    info: {
      title: 'detflow API',
      version: '1.0.0',
      description:
        'Detection-rule CI/CD: lint, test, replay, shadow, deploy with approval, roll back. ' +
        'Readable reference: /docs. The same document in OpenAPI 3.0.3: /api/v1/openapi.json; in 3.1.0: /api/v1/openapi-3.1.json.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
  };
  return version === '3.1.0'
    ? new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', ...config })
    : new OpenApiGeneratorV3(registry.definitions).generateDocument({ openapi: '3.0.3', ...config });
}
