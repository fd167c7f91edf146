import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import { unavailable } from '../../domain/errors';

/**
 * What the API is still doing, so a shutdown can finish it before the database closes under it:
 * each route's handler is tracked from its start to its end (which can outlast the response's
 * socket), and once draining starts new requests are refused with a 503 that closes the connection.
 */
const currentDrain = new AsyncLocalStorage<RequestDrain>();

/**
 * Whether the API serving the request this code runs for is shutting down: a long poll then
 * answers what it has at once instead of holding the shutdown up.
 */
export function shuttingDown(): boolean {
  return currentDrain.getStore()?.isDraining ?? false;
}

export class RequestDrain {
  private inFlight = 0;
  private draining = false;
  private idle: Array<() => void> = [];

  get isDraining(): boolean {
    return this.draining;
  }

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await currentDrain.run(this, work);
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** Refuses requests that arrive once draining started (on connections kept alive before it). */
  refuseWhileDraining() {
    return (_req: Request, res: Response, next: NextFunction) => {
      if (!this.draining) return next();
      res.setHeader('Connection', 'close');
      next(unavailable('The service is shutting down; retry on another instance or after it restarts', 5));
    };
  }

  startDraining(): void {
    this.draining = true;
  }

  /** Resolves with the number of handlers still running when they all ended or `ms` passed. */
  async settled(ms: number): Promise<number> {
    if (this.inFlight === 0) return 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.inFlight;
  }
}
