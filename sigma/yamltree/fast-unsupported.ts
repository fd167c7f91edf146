/** Thrown by the fast path at anything outside its subset; the caller then falls back to the `yaml` library. */
export class Unsupported extends Error {}
export const bail = (): never => {
  throw new Unsupported();
};
