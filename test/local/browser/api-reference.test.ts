import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { routes, type Route } from '../../../shared/facts/routes';
import { describeInChromium, launchChromium } from '../../helpers/chromium';
import { startTestApi, type TestApi } from '../../helpers/local-api';

export const SCREENSHOT = resolve(PROJECT_ROOT, 'test-results/api-reference.png');

describeInChromium('the interactive API reference at /docs', () => {
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

  it('shows every operation, each deprecated one marked so, and runs listPets against the local API with a pasted key', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const offline: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`http://localhost:${api.port}/`)) offline.push(request.url());
    });
    await page.goto(api.docsUrl);

    const operations = page.locator('.opblock');
    // Swagger UI renders after it has fetched and parsed the document: seconds on a busy machine.
    await expect.poll(() => operations.count(), { timeout: 15_000 }).toBe(routes.length);
    for (const route of routes as readonly Route[]) {
      const shown = page.locator(`#operations-pets-${route.operationId}`);
      await expect.poll(() => shown.count()).toBe(1);
      expect((await shown.getAttribute('class'))?.split(' ').includes('opblock-deprecated'), route.operationId).toBe(
        route.deprecation !== undefined,
      );
    }

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
