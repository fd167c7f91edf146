import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium; .ci/run installs it), or another one named here. */
export const CHROMIUM = process.env.DETFLOW_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Screenshots of each page, kept as test artifacts (gitignored). */
export const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/console');

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] };

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not
 * govern: the console itself runs no inline script) and answers the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string | null; help: string; targets: string[] }[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page: this project's type checking knows Node, not the DOM.
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
}

/** Whether the page scrolls sideways: the document is wider than the viewport. */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}
