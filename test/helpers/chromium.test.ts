import { describe, expect, it } from 'vitest';
import { planBrowserSuites } from './chromium';

const installed = () => true;
const missing = () => false;

describe('whether the browser suites run', () => {
  it('runs them where Chromium is, CI or not', () => {
    expect(planBrowserSuites('/usr/bin/chromium', installed, undefined)).toEqual({ action: 'run' });
    expect(planBrowserSuites('/usr/bin/chromium', installed, 'true')).toEqual({ action: 'run' });
  });

  it('looks for Chromium at the path it is given', () => {
    const seen: string[] = [];
    planBrowserSuites(
      '/opt/fake/chromium',
      (path) => {
        seen.push(path);
        return false;
      },
      undefined,
    );
    expect(seen).toEqual(['/opt/fake/chromium']);
  });

  it.each(['true', '1', 'TRUE'])('fails them under CI=%s without Chromium, naming where it looked', (ci) => {
    const plan = planBrowserSuites('/opt/fake/chromium', missing, ci);
    expect(plan).toEqual({ action: 'fail', reason: expect.stringContaining('no Chromium at /opt/fake/chromium') });
  });

  it.each([undefined, '', '0', 'false'])('skips them without Chromium outside CI (CI=%s), saying why', (ci) => {
    const plan = planBrowserSuites('/opt/fake/chromium', missing, ci);
    expect(plan).toEqual({ action: 'skip', reason: expect.stringMatching(/no Chromium at \/opt\/fake\/chromium, browser tests skipped/) });
  });
});
