import { defineConfig } from 'drizzle-kit';

// Migrations are generated from db/schema/ (its index) (`npm run db:generate`) and applied at start-up.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});
