import crypto from 'node:crypto';

/** How far a callback's timestamp may be from our clock, as Slack documents: five minutes. */
export const SLACK_MAX_SKEW_SECONDS = 5 * 60;

/** `v0=<hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>")>`, as Slack signs requests. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  return 'v0=' + crypto.createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest('hex');
}

export type SlackVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a request from Slack (X-Slack-Request-Timestamp, X-Slack-Signature) over the raw body as
 * received: the signature first, in constant time, then the timestamp's freshness.
 */
export function verifySlackRequest(input: { signingSecret: string; timestamp: string | undefined; signature: string | undefined; rawBody: Buffer; now: Date }): SlackVerdict {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: 'The X-Slack-Request-Timestamp and X-Slack-Signature headers are required' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a Unix time in seconds' };
  const expected = Buffer.from(slackSignature(input.signingSecret, timestamp, input.rawBody));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'X-Slack-Signature does not match the signing secret' };
  }
  const skew = Math.abs(Math.floor(input.now.getTime() / 1000) - Number(timestamp));
  if (skew > SLACK_MAX_SKEW_SECONDS) return { ok: false, reason: `X-Slack-Request-Timestamp is ${skew} s away from now (more than 5 minutes)` };
  return { ok: true };
}
