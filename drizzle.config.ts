import { defineConfig } from 'drizzle-kit';

// Migrations are generated from db/schema.ts (`npm run db:generate`) and applied at start-up.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema.ts',
  out: './db/migrations',
});
