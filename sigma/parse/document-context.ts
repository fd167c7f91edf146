import { SigmaError, type SigmaErrorCode, type SourcePosition } from '../errors';
import type { YNode, YPair } from '../yamltree';

/** Collects errors instead of stopping at the first, so lint can report everything at once. */
export class DocumentContext {
  readonly errors: SigmaError[] = [];
  constructor(
    readonly position: (offset: number) => SourcePosition,
    readonly source: string | undefined,
    /** The YAML text, to read a scalar as written where the resolved value loses information. */
    readonly text: string = '',
  ) {}

  pos(node: YNode | YPair): SourcePosition {
    return this.position('keyOffset' in node ? node.keyOffset : node.offset);
  }

  error(code: SigmaErrorCode, message: string, at: SourcePosition): SigmaError {
    const e = new SigmaError(code, message, at, this.source);
    this.errors.push(e);
    return e;
  }

  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      if (e instanceof SigmaError) {
        this.errors.push(e);
        return undefined;
      }
      throw e;
    }
  }
}
