import { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { toOpenApi, type RouteSpec } from './http/route';

/** The OpenAPI document, generated from the same route declarations the server enforces. */
export function buildOpenApiDocument(routes: RouteSpec<any, any, any>[], serverUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A detflow API token: dfw_ followed by 38 base62 characters',
  });
  for (const route of routes) registry.registerPath(toOpenApi(route));
  const generator = new OpenApiGeneratorV3(registry.definitions);
  return generator.generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'detflow API',
      version: '1.0.0',
      description: 'Detection-rule CI/CD: lint, test, replay, shadow, deploy with approval, roll back.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
  });
}
