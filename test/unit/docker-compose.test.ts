import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const root = path.join(__dirname, '../..');

describe('docker-compose.yml (the scaled topology)', () => {
  const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
  const services = compose.services as Record<string, any>;

  it('names PostgreSQL, Temporal on PostgreSQL, the Temporal UI, and api and worker as separate services', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'postgresql', 'temporal', 'temporal-ui', 'worker']);
    expect(services.temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
    expect(services['temporal-ui'].environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('points api and worker at the shared database and Temporal, and runs files that exist', () => {
    for (const name of ['api', 'worker']) {
      const s = services[name];
      expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgresql:5432\//);
      expect(s.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(Object.keys(s.depends_on).sort()).toEqual(['postgresql', 'temporal']);
      // One process with tsx as its loader, so SIGTERM reaches the service's own drain.
      expect(s.command.slice(0, 3)).toEqual(['node', '--import', 'tsx']);
      expect(fs.existsSync(path.join(root, s.command[3]))).toBe(true);
    }
    expect(services.api.command[3]).toBe('api/main.ts');
    expect(services.worker.command[3]).toBe('worker/main.ts');
    expect(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8')).toMatch(/npm ci --omit=dev/);
  });
});
