// Offline: once loaded, the service worker serves the page's own files without a network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, goto, assertClean, text } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('the page works offline once loaded', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&tp=2', { serviceWorkers: 'allow' });
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  // The worker takes control after its first install; reload once so it serves this page.
  await page.reload();
  await page.waitForSelector('[data-testid=verdict-headline]:not(:empty)');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  const verdict = await text(page, 'verdict');
  await context.setOffline(true);
  await goto(page, '/?v=1&tp=2');
  assert.equal(await text(page, 'verdict'), verdict);
  assert.equal(await page.locator('[data-testid="rank-chart"] .svg > svg').count(), 1);
  await context.setOffline(false);
  // The cache holds one release: a file the page no longer names (a previous release's
  // hashed wasm) goes when a fresh page comes from the network.
  await page.evaluate(async () => {
    const cache = await caches.open('headroom-v1');
    await cache.put('/headroom-web-0000000000000000_bg.wasm', new Response('old release'));
  });
  await goto(page, '/?v=1&tp=2');
  await page.waitForFunction(async () => {
    const keys = await (await caches.open('headroom-v1')).keys();
    return !keys.some((r) => r.url.includes('0000000000000000'));
  });
  const kept = await page.evaluate(async () =>
    (await (await caches.open('headroom-v1')).keys()).map((r) => new URL(r.url).pathname),
  );
  assert.ok(kept.includes('/') && kept.some((p) => p.endsWith('_bg.wasm')), kept.join(' '));
  assertClean(problems);
  await context.close();
});
