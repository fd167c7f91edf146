import http from 'node:http';
import https from 'node:https';
import type { TargetKind } from '../adapter';
import { failureOfStatus, parseRetryAfter, SiemRequestError } from './errors';
import { Semaphore } from './semaphore';

export interface HttpClientOptions {
  readonly kind: TargetKind;
  /** Names the target in errors (the service's target id or name; never a credential). */
  readonly target: string;
  /** PEM bundle of the CAs a private SIEM's certificate chains to; the system's CAs otherwise. */
  readonly caBundle?: string | undefined;
  /** Per-request timeout (connect to last byte), in milliseconds. */
  readonly timeoutMs?: number | undefined;
  /** Requests in flight to this target at once, from this process. */
  readonly maxConcurrency?: number | undefined;
  /** Strings that must never appear in an error message (the target's credentials). */
  readonly secrets?: readonly string[] | undefined;
  /** Reads the vendor's message out of an error answer's body. */
  readonly vendorMessage?: ((body: string, contentType: string | undefined) => string | undefined) | undefined;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Status codes that are answers, not failures (e.g. 404 on a lookup). */
  readonly accept?: readonly number[];
  readonly timeoutMs?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * A small HTTP client for one remote SIEM target: per-target CA bundle, a timeout on every request,
 * a cap on requests in flight (a bulk sync of hundreds of rules must not flood the SIEM), and
 * failures classified once (`SiemRequestError`) with credentials kept out of every message.
 */
export class SiemHttpClient {
  private readonly httpsAgent: https.Agent;
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly slots: Semaphore;

  constructor(private readonly options: HttpClientOptions) {
    this.httpsAgent = new https.Agent({ keepAlive: true, ...(options.caBundle ? { ca: options.caBundle } : {}) });
    this.slots = new Semaphore(options.maxConcurrency ?? 4);
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    return this.slots.run(() => this.sendOnFreshOrPooledSocket(req));
  }

  /** A JSON answer, parsed; a body that is not JSON is the SIEM's fault and reported as such. */
  async json<T = unknown>(req: HttpRequest): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: T }> {
    const res = await this.request(req);
    if (res.body === '') return { status: res.status, headers: res.headers, body: undefined as T };
    try {
      return { status: res.status, headers: res.headers, body: JSON.parse(res.body) as T };
    } catch {
      throw this.error('unavailable', req, `answered ${res.status} with a body that is not JSON`, { status: res.status });
    }
  }

  close(): void {
    this.httpsAgent.destroy();
    this.httpAgent.destroy();
  }

  /**
   * A pooled keep-alive socket may have been closed by the SIEM (or a load balancer in front of it)
   * just as this request was written to it: the request then fails with a reset before a single
   * byte of answer, and the SIEM never read it. Such a request is sent again (the documented remedy
   * for Node's keep-alive race), up to the pool's size; a request on a fresh socket is never resent.
   */
  private async sendOnFreshOrPooledSocket(req: HttpRequest): Promise<HttpResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(req);
      } catch (err) {
        if (!(err instanceof StaleSocket) || attempt >= MAX_STALE_SOCKET_RETRIES) throw err instanceof StaleSocket ? err.failure : err;
      }
    }
  }

  private send(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.url);
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    return new Promise<HttpResponse>((resolve, reject) => {
      const r = transport.request(url, { method: req.method, headers, agent: secure ? this.httpsAgent : this.httpAgent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) {
            r.destroy();
            reject(this.error('unavailable', req, `answered with more than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => reject(this.error('unavailable', req, `answer broke off: ${err.message}`)));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if ((status >= 200 && status < 300) || req.accept?.includes(status)) {
            resolve({ status, headers: res.headers, body });
            return;
          }
          const retryAfterHeader = res.headers['retry-after'];
          const retryAfterMs = parseRetryAfter(Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader);
          // Redacted whole, before any cut: a cut inside a credential would leave its start behind.
          const safeBody = this.redact(body, req);
          const vendorMessage = this.options.vendorMessage?.(safeBody, res.headers['content-type']) ?? safeBody.slice(0, 500);
          const failure = failureOfStatus(status, retryAfterMs !== undefined);
          reject(
            this.error(failure, req, `answered ${status}${vendorMessage ? `: ${vendorMessage}` : ''}`, {
              status,
              ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
              ...(vendorMessage ? { vendorMessage } : {}),
            }),
          );
        });
      });
      // From the request to the answer's last byte: an answer trickled slowly ends too.
      const deadline = setTimeout(() => r.destroy(new TimeoutError(timeoutMs)), timeoutMs);
      r.on('close', () => clearTimeout(deadline));
      let answered = false;
      r.on('response', () => {
        answered = true;
      });
      r.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        if (!answered && r.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
          reject(new StaleSocket(this.error('unavailable', req, `could not be reached: ${this.redact(err.message, req)}`)));
        } else if (err instanceof TimeoutError) reject(this.error('timeout', req, `did not answer within ${timeoutMs} ms`));
        else reject(this.error('unavailable', req, `could not be reached: ${this.redact(err.message, req)}`));
      });
      if (req.body !== undefined) r.write(req.body);
      r.end();
    });
  }

  private error(failure: ConstructorParameters<typeof SiemRequestError>[1], req: HttpRequest, what: string, details: ConstructorParameters<typeof SiemRequestError>[3] = {}) {
    const url = new URL(req.url);
    return new SiemRequestError(this.options.kind, failure, `${this.options.kind} target ${this.options.target}: ${req.method} ${url.origin}${url.pathname} ${what}`, details);
  }

  /**
   * Removes every credential of the target from a text that may be shown or logged: as configured,
   * URL-encoded and base64-encoded, and whatever the request itself sent as its Authorization
   * (a token obtained at run time, an encoded Basic pair).
   */
  redact(text: string, req?: HttpRequest): string {
    const secrets = new Set<string>();
    for (const s of this.options.secrets ?? []) {
      secrets.add(s);
      secrets.add(encodeURIComponent(s));
      secrets.add(Buffer.from(s, 'utf8').toString('base64'));
    }
    const authorization = Object.entries(req?.headers ?? {}).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
    if (authorization) secrets.add(authorization.replace(/^\S+\s+/, ''));
    let out = text;
    // Longest first, so a secret that contains another is removed whole.
    for (const s of [...secrets].sort((a, b) => b.length - a.length)) if (s.length >= 4) out = out.split(s).join('********');
    return out;
  }
}

const MAX_STALE_SOCKET_RETRIES = 3;

/** A request that failed on a pooled socket the peer had already closed; `failure` if it is not resent. */
class StaleSocket extends Error {
  constructor(readonly failure: SiemRequestError) {
    super(failure.message);
  }
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** `application/x-www-form-urlencoded` body of a flat record; arrays repeat the key. */
export function formBody(fields: Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) params.append(k, x);
    else params.append(k, String(v));
  }
  return params.toString();
}
