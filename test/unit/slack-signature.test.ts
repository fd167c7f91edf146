import { slackSignature, verifySlackRequest } from '../../domain/integrations/slack/signature';

// The worked example of Slack's "Verifying requests from Slack" documentation.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = '1531420618';
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOCUMENTED = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

const at = (seconds: number) => new Date((Number(TIMESTAMP) + seconds) * 1000);
const verify = (over: Partial<Parameters<typeof verifySlackRequest>[0]>) =>
  verifySlackRequest({ signingSecret: SECRET, timestamp: TIMESTAMP, signature: DOCUMENTED, rawBody: Buffer.from(BODY), now: at(0), ...over });

describe("Slack's request signature", () => {
  it("reproduces the documentation's example", () => {
    expect(slackSignature(SECRET, TIMESTAMP, BODY)).toBe(DOCUMENTED);
    expect(verify({})).toEqual({ ok: true });
  });

  it('refuses another secret, a changed body, a missing header and a timestamp more than five minutes away', () => {
    expect(verify({ signingSecret: SECRET + 'x' }).ok).toBe(false);
    expect(verify({ rawBody: Buffer.from(BODY.replace('roadrunner', 'coyote')) }).ok).toBe(false);
    expect(verify({ signature: undefined }).ok).toBe(false);
    expect(verify({ signature: 'v0=' + 'a'.repeat(64) }).ok).toBe(false);
    expect(verify({ timestamp: '1531420619' }).ok).toBe(false);
    expect(verify({ now: at(300) })).toEqual({ ok: true });
    expect(verify({ now: at(301) }).ok).toBe(false);
    expect(verify({ now: at(-301) }).ok).toBe(false);
  });
});
