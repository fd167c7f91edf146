import fs from 'node:fs';

const shared = globalThis as typeof globalThis & { __detflowTest?: { stop?: () => Promise<void>; dir?: string } };

export default async function globalTeardown(): Promise<void> {
  const state = shared.__detflowTest;
  if (!state) return;
  shared.__detflowTest = undefined;
  await state.stop?.();
  if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
}
