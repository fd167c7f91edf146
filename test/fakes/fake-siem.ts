/**
 * What every fake vendor SIEM offers the tests that drive detflow's real workflows against it.
 * Each fake (test/fakes/<kind>/) is an HTTP server on loopback that implements the slice of the
 * vendor's API its adapter uses, as the vendor documents it, and rejects any request that departs
 * from it; these are the handles a test uses to seed it, inspect it and break it.
 */
export type FakeKind = 'splunk' | 'elastic' | 'sentinel';

/** A Windows process creation (Sysmon event 1), in Sigma's field names; each fake stores it in its own schema (CIM, ECS, Defender). */
export interface ProcessEvent {
  readonly time: Date;
  readonly image: string;
  readonly commandLine: string;
  readonly parentImage?: string;
  readonly user?: string;
  readonly host?: string;
}

/** A fault played back on the next matching requests. */
export interface Fault {
  /** How many matching requests it applies to. */
  readonly times: number;
  /** Requests it applies to (method and path, e.g. `POST /servicesNS/...`); every request when absent. */
  readonly match?: RegExp;
  /** Answer with this status (the vendor's error body for it); absent with `delayMs` alone, the answer is only late. */
  readonly status?: number;
  readonly retryAfterSeconds?: number;
  /** Hold the answer this long first. */
  readonly delayMs?: number;
}

/** One object the fake holds under detflow's naming scheme (saved search, detection rule, analytics rule). */
export interface FakeObject {
  readonly name: string;
  readonly query: string;
  readonly enabled: boolean;
  readonly description: string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** When the request reached the fake (before any fault's delay). */
  readonly at: Date;
}

export interface FakeSiem {
  readonly kind: FakeKind;
  /** A target's `connection` settings that reach this fake (credentials in clear). */
  connection(): Record<string, string | number | boolean>;
  addProcessEvents(events: readonly ProcessEvent[]): void;
  /** The objects it holds now. */
  objects(): FakeObject[];
  /** Out-of-band changes, as a person in the SIEM's UI would make them. */
  editQuery(name: string, query: string): void;
  setEnabled(name: string, enabled: boolean): void;
  remove(name: string): void;
  /** Records alerts raised by an object at these times (fired alerts, alerts index, incidents). */
  recordAlerts(name: string, times: readonly Date[]): void;
  /** The credentials stop working (401 on every request) until `restoreCredentials`. */
  expireCredentials(): void;
  restoreCredentials(): void;
  fault(fault: Fault): void;
  /** Every request answered, in order. */
  requests(): RecordedRequest[];
  /** Requests that created or changed an object (a deploy), in order. */
  writes(): RecordedRequest[];
  close(): Promise<void>;
}
