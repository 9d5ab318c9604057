import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describe, it } from 'vitest';

/** Debian's Chromium; .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the browser suites do on a machine: run, or, without Chromium, fail (in CI) or skip saying why. */
export type BrowserSuitePlan = { readonly action: 'run' } | { readonly action: 'fail' | 'skip'; readonly reason: string };

/** CI services set CI=true; an empty, `0` or `false` CI is a developer's shell. */
function isCi(ci: string | undefined): boolean {
  return ci !== undefined && !['', '0', 'false'].includes(ci.trim().toLowerCase());
}

/** CI must run the browser suites: without Chromium they fail there, and are skipped, visibly, anywhere else. */
export function planBrowserSuites(chromiumPath: string, installed: (path: string) => boolean, ci: string | undefined): BrowserSuitePlan {
  if (installed(chromiumPath)) return { action: 'run' };
  const install = "install Debian's chromium (.ci/run does) or set CHROMIUM_PATH";
  return isCi(ci)
    ? { action: 'fail', reason: `CI must run the browser tests, and there is no Chromium at ${chromiumPath}: ${install}` }
    : { action: 'skip', reason: `no Chromium at ${chromiumPath}, browser tests skipped: ${install} (with CI=true this fails)` };
}

const plan = planBrowserSuites(CHROMIUM, existsSync, process.env.CI);

/**
 * describe() for a suite that drives Chromium. Without Chromium the suite is a single test that fails
 * in CI and is skipped elsewhere, with its reason beside it in the report and on stderr.
 */
export function describeInChromium(title: string, suite: () => void): void {
  if (plan.action === 'run') {
    describe(title, suite);
    return;
  }
  const { action, reason } = plan;
  if (action === 'skip') console.warn(`${title}: ${reason}`);
  describe(title, () => {
    it('runs in Chromium', (context) => {
      if (action === 'skip') context.skip(reason);
      throw new Error(reason);
    });
  });
}

/**
 * Launches that Chromium headless, its background services off: they would try (and fail) to reach
 * Google on this closed network.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
