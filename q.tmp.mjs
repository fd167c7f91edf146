import { PGlite } from '@electric-sql/pglite';
const db = new PGlite(process.argv[2]);
for (const q of process.argv.slice(3)) {
  for (let i=0;i<3;i++){ const t0=performance.now(); const r = await db.query(q); if(i==2){ for (const row of r.rows) console.log(Object.values(row).join(' | '));} console.log('ms', Math.round(performance.now()-t0)); }
}
await db.close();
