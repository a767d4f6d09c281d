// The first paint, before the wasm arrives: the static shell in index.html shows the app's own
// header and a line naming what the link plans (from the address, as text), never a verdict;
// the app then replaces the shell with the live page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, assertClean } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('the shell paints the header and names the link while the wasm loads, then gives way', async () => {
  const { context, page, problems } = await open(browser, null);
  let release;
  const held = new Promise((r) => {
    release = r;
  });
  await context.route('**/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  const link = '/?v=1&model=llama-3.1-70b-instruct&tp=4&gpu=h200-141gb&gpus=4&x=<img src=x onerror=alert(1)>';
  await page.goto(new URL(link, process.env.BASE_URL ?? 'http://127.0.0.1:8080').href, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => document.getElementById('shell-scenario')?.textContent.startsWith('Planning'));
  const line = await page.textContent('#shell-scenario');
  assert.match(line, /^Planning model llama-3\.1-70b-instruct, on 4 x h200-141gb, TP=4:/);
  // The header is there to read; no verdict and no figure is, before the plan.
  assert.equal(await page.locator('#shell header.top h1').textContent(), 'Headroom');
  assert.equal(await page.locator('[data-testid=verdict-headline]').count(), 0);
  assert.equal(await page.locator('[data-testid=max-concurrency]').count(), 0);
  assert.equal(await page.locator('img').count(), 0, 'the address is never markup');
  release();
  await page.waitForSelector('[data-testid=verdict-headline]:not(:empty)');
  assert.equal(await page.locator('#shell').count(), 0);
  assert.equal(await page.locator('header.top').count(), 1);
  assert.match(await page.textContent('[data-testid=verdict-headline]'), /^Starts/);
  // The ignored x= parameter gets the app's notice, as for any link.
  await page.waitForSelector('[data-testid=url-notice]');
  assertClean(problems);
  await context.close();
});
