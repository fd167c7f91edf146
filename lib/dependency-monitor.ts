/** What a probe found of one dependency, and since when it has been so. */
export type DependencyState = {
  readonly up: boolean;
  /** When the dependency last went up or down (the process's start for one never seen down). */
  readonly since: Date;
  /** Why it is down: the last failure's message. */
  readonly error?: string;
};

export type DependencyProbe = () => Promise<void>;

export type DependencyMonitorOptions = {
  readonly probes?: Readonly<Record<string, DependencyProbe>>;
  /** Between the end of one round of probes and the start of the next. */
  readonly intervalMs?: number;
  /** A probe that has not answered by then counts as a failure. */
  readonly timeoutMs?: number;
  readonly now?: () => Date;
  /** Told of every change, for the log. */
  readonly onChange?: (name: string, state: DependencyState) => void;
};

/**
 * Keeps the last known state of each dependency, probed in the background, so that readiness is
 * answered from memory at once and a request that needs a dependency known to be down is refused at
 * once, instead of each waiting out the dependency's own timeouts. A call that fails on its own
 * (`markDown`) is news too: it is taken without waiting for the next probe.
 */
export class DependencyMonitor {
  private readonly states = new Map<string, DependencyState>();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private started = false;

  private readonly probes = new Map<string, DependencyProbe>();

  constructor(private readonly options: DependencyMonitorOptions = {}) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.timeoutMs = options.timeoutMs ?? 2_000;
    this.now = options.now ?? (() => new Date());
    for (const [name, probe] of Object.entries(options.probes ?? {})) this.addProbe(name, probe);
  }

  /** A dependency to watch from now on (one that exists only once others are up, like a client). */
  addProbe(name: string, probe: DependencyProbe): void {
    this.probes.set(name, probe);
    this.states.set(name, { up: true, since: this.now() });
  }

  /** Probes once now, then every interval until `stop`. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.probeAll();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  snapshot(): Record<string, DependencyState> {
    return Object.fromEntries(this.states);
  }

  isDown(name: string): boolean {
    return this.states.get(name)?.up === false;
  }

  state(name: string): DependencyState | undefined {
    return this.states.get(name);
  }

  markDown(name: string, error: string): void {
    this.set(name, false, error);
  }

  /** Probes every dependency at once (each within the timeout) and records what it found. */
  async probeAll(): Promise<void> {
    await Promise.all(
      [...this.probes].map(async ([name, probe]) => {
        try {
          await withTimeout(probe(), this.timeoutMs);
          this.set(name, true);
        } catch (err) {
          this.set(name, false, err instanceof Error ? err.message : String(err));
        }
      }),
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.probeAll().finally(() => this.schedule());
    }, this.intervalMs);
    // Probing alone never keeps a process alive.
    this.timer.unref();
  }

  private set(name: string, up: boolean, error?: string): void {
    const before = this.states.get(name);
    if (before && before.up === up) {
      // Still down: keep when it went down, take the latest reason.
      if (!up && error !== undefined && error !== before.error) this.states.set(name, { ...before, error });
      return;
    }
    const state: DependencyState = up ? { up, since: this.now() } : { up, since: this.now(), ...(error !== undefined ? { error } : {}) };
    this.states.set(name, state);
    this.options.onChange?.(name, state);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
