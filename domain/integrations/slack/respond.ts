/**
 * Answers an interaction through its `response_url` (Slack's short-lived webhook for the message
 * clicked). A failure is reported, not thrown: the decision it follows is already recorded.
 */
export async function postToResponseUrl(url: string, body: unknown): Promise<{ ok: true } | { ok: false; error: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    return res.ok ? { ok: true } : { ok: false, error: `response_url answered ${res.status}` };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
