import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../project-root';
import { hasChromium, launchChromium } from '../../helpers/chromium';
import { startTestApi, type TestApi } from '../../helpers/local-api';

export const SCREENSHOT = resolve(PROJECT_ROOT, 'test-results/api-reference.png');

describe.skipIf(!hasChromium)('the interactive API reference at /docs', () => {
  let api: TestApi;
  let browser: Browser;
  beforeAll(async () => {
    api = await startTestApi();
    await api.createPet({ name: 'Rex', categoryId: 1, status: 'available' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('shows the three operations and runs listPets against the local API with a pasted key', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const offline: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`http://localhost:${api.port}/`)) offline.push(request.url());
    });
    await page.goto(api.docsUrl);

    const operations = page.locator('.opblock');
    await expect.poll(() => operations.count()).toBe(3);
    for (const id of ['listPets', 'createPet', 'getPet']) await expect.poll(() => page.locator(`#operations-pets-${id}`).count()).toBe(1);
    expect(await page.locator('#operations-pets-getPet').getAttribute('class')).toContain('opblock-deprecated');

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input[type=text], .modal-ux input[type=password]').first().fill(api.apiKey);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    const listPets = page.locator('#operations-pets-listPets');
    await listPets.locator('.opblock-summary').click();
    await listPets.locator('button.execute').click();
    const response = listPets.locator('.live-responses-table tbody tr.response').first();
    await expect.poll(() => response.locator('.response-col_status').textContent(), { timeout: 15_000 }).toContain('200');
    expect(await response.locator('.response-col_description').textContent()).toContain('Rex');

    await mkdir(resolve(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(offline, 'the page must load nothing from outside the local server').toEqual([]);
  });
});
