import crypto from 'node:crypto';
import http from 'node:http';

/** A post as Mattermost stores it from an incoming webhook: the message, and the attachments in props. */
export type MattermostPost = { id: string; message: string; props: { attachments?: any[] }; received: any };

/** What the fake's user saw after a click: the HTTP answer, and the note Mattermost showed them only. */
export type MattermostClick = { status: number; answer: any; ephemeral: string | undefined };

/** A Mattermost id: 26 lower-case letters and digits. */
export const mattermostId = (seed: string) => crypto.createHash('sha256').update(seed).digest('hex').slice(0, 26);

/**
 * A fake Mattermost on loopback. Its incoming webhook checks what Mattermost's does of a message
 * with interactive buttons (a `text` or attachments; every action named, with an alphanumeric id,
 * as Mattermost routes a click by it, and an absolute http(s) integration URL) and stores the post.
 * A click POSTs a post action request to the button's integration URL as the Mattermost server does
 * (`user_id`, `user_name`, `channel_id`, `team_id`, `post_id`, `trigger_id`, `type`, `context`) and
 * applies the answer as Mattermost does: only a 200 counts; its `update` replaces the post's message
 * and props, and its `ephemeral_text` is shown to the clicking user only.
 */
export class FakeMattermost {
  readonly posts: MattermostPost[] = [];
  readonly refused: Array<{ body: unknown; reason: string }> = [];
  private server: http.Server | undefined;
  private port = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const reason = req.url === '/hooks/detflow' ? this.take(body) : `no incoming webhook at ${req.url}`;
        res.statusCode = reason ? 400 : 200;
        res.end(reason ?? 'ok');
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

  get webhookUrl(): string {
    return `http://127.0.0.1:${this.port}/hooks/detflow`;
  }

  /** Stores a valid incoming-webhook message as a post; returns why one is refused. */
  private take(raw: string): string | undefined {
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return this.refuse(raw, 'the body is not JSON');
    }
    const attachments: any[] = Array.isArray(body.attachments) ? body.attachments : [];
    if (typeof body.text !== 'string' && attachments.length === 0) return this.refuse(body, 'neither text nor attachments');
    for (const action of attachments.flatMap((a) => a.actions ?? [])) {
      if (typeof action.name !== 'string' || action.name === '') return this.refuse(body, 'an action without a name');
      if (action.id !== undefined && !/^[A-Za-z0-9]+$/.test(action.id)) return this.refuse(body, `action id ${action.id} is not alphanumeric`);
      if (!/^https?:\/\//.test(action.integration?.url ?? '')) return this.refuse(body, 'an action without an absolute integration URL');
    }
    this.posts.push({ id: mattermostId(`post-${this.posts.length}-${raw}`), message: body.text ?? '', props: { attachments }, received: body });
    return undefined;
  }

  private refuse(body: unknown, reason: string): string {
    this.refused.push({ body, reason });
    return reason;
  }

  postFor(approvalId: string): MattermostPost | undefined {
    return this.posts.find((p) => p.received.data?.approval_id === approvalId);
  }

  buttons(post: MattermostPost): any[] {
    return (post.props.attachments ?? []).flatMap((a) => a.actions ?? []);
  }

  /** A user clicks the button `actionId` of `post`: Mattermost's server calls its integration. */
  async click(post: MattermostPost, actionId: string, user: { id: string; name: string }): Promise<MattermostClick> {
    const action = this.buttons(post).find((a) => a.id === actionId);
    if (!action) throw new Error(`The post has no button ${actionId}`);
    const request = {
      user_id: user.id,
      user_name: user.name,
      channel_id: mattermostId('channel'),
      channel_name: 'detections',
      team_id: mattermostId('team'),
      team_domain: 'secops',
      post_id: post.id,
      trigger_id: mattermostId(`trigger-${Date.now()}`),
      type: 'button',
      data_source: '',
      context: action.integration.context,
    };
    const { status, answer } = await FakeMattermost.send(action.integration.url, request);
    if (status !== 200) return { status, answer, ephemeral: undefined };
    if (answer?.update) {
      post.message = answer.update.message ?? post.message;
      post.props = answer.update.props ?? {};
    }
    return { status, answer, ephemeral: answer?.ephemeral_text || undefined };
  }

  /** POSTs a post action request as Mattermost's server does (or a forger would). */
  static async send(url: string, request: unknown): Promise<{ status: number; answer: any }> {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    const text = await res.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = text;
    }
    return { status: res.status, answer };
  }
}
