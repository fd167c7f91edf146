import crypto from 'node:crypto';
import http from 'node:http';

/** One request Slack would have received: an incoming-webhook message, or an answer on a response_url. */
export type SlackReceived = { path: string; body: any };

/** A callback as sent, kept so a test can send the very same bytes again (a replay). */
export type SlackCallbackSent = { rawBody: string; headers: Record<string, string>; status: number; answer: any };

/**
 * A fake Slack on loopback: it takes the messages detflow posts to an incoming webhook and to
 * `response_url`, and plays a user clicking a button, sending the `block_actions` callback as Slack
 * documents it: `application/x-www-form-urlencoded` with `payload=<JSON>`, signed with the app's
 * signing secret (`X-Slack-Signature: v0=<hex HMAC-SHA256("v0:<timestamp>:<body>")>`,
 * `X-Slack-Request-Timestamp`).
 */
export class FakeSlack {
  readonly received: SlackReceived[] = [];
  private server: http.Server | undefined;
  private port = 0;
  private responses = 0;

  constructor(readonly signingSecret: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        let parsed: unknown = body;
        try {
          parsed = JSON.parse(body);
        } catch {
          // kept as text
        }
        this.received.push({ path: req.url ?? '', body: parsed });
        res.statusCode = 200;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
  }

  /** The incoming-webhook URL to configure as detflow's webhook. */
  get webhookUrl(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  messages(): any[] {
    return this.received.filter((r) => r.path === '/hook').map((r) => r.body);
  }

  /** What detflow posted to the response_url of a callback. */
  answersTo(responseUrl: string): any[] {
    return this.received.filter((r) => `http://127.0.0.1:${this.port}${r.path}` === responseUrl).map((r) => r.body);
  }

  static sign(secret: string, timestamp: string, rawBody: string): string {
    return 'v0=' + crypto.createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex');
  }

  /**
   * A user clicks a button of `message` (a message detflow posted): the callback goes to
   * `interactionsUrl`. `at` sets the timestamp (a stale one), `secret` signs with another key (a forgery).
   */
  async click(
    interactionsUrl: string,
    input: { message: any; actionId: string; teamId: string; userId: string; at?: Date; secret?: string },
  ): Promise<SlackCallbackSent & { responseUrl: string }> {
    const button = input.message.blocks
      .filter((b: any) => b.type === 'actions')
      .flatMap((b: any) => b.elements)
      .find((e: any) => e.action_id === input.actionId);
    if (!button) throw new Error(`The message has no button ${input.actionId}`);
    const responseUrl = `http://127.0.0.1:${this.port}/response/${++this.responses}`;
    const payload = {
      type: 'block_actions',
      user: { id: input.userId, username: input.userId.toLowerCase(), team_id: input.teamId },
      api_app_id: 'A0FAKEAPP',
      token: 'deprecated-verification-token',
      container: { type: 'message', message_ts: '1700000000.000100', channel_id: 'C0FAKE', is_ephemeral: false },
      trigger_id: `${Date.now()}.trigger`,
      team: { id: input.teamId, domain: 'fake' },
      channel: { id: 'C0FAKE', name: 'detections' },
      message: { type: 'message', text: input.message.text, blocks: input.message.blocks, ts: '1700000000.000100' },
      response_url: responseUrl,
      actions: [{ type: 'button', action_id: button.action_id, block_id: 'b', value: button.value, text: button.text, action_ts: `${Date.now() / 1000}` }],
    };
    const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor((input.at ?? new Date()).getTime() / 1000));
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': FakeSlack.sign(input.secret ?? this.signingSecret, timestamp, rawBody),
    };
    return { ...(await FakeSlack.send(interactionsUrl, rawBody, headers)), responseUrl };
  }

  /** Sends a callback's exact bytes and headers (again). */
  static async send(url: string, rawBody: string, headers: Record<string, string>): Promise<SlackCallbackSent> {
    const res = await fetch(url, { method: 'POST', headers, body: rawBody });
    const text = await res.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = text;
    }
    return { rawBody, headers, status: res.status, answer };
  }
}
