// What fixes it (issue 17, item 3): each change is planned before it is offered; "Apply" loads
// its inputs and the scenario then starts; its link opens the same scenario.
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

test("seed 000's balanced split, applied by a click, starts", async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s1-three-cards');
  const fix = page.locator('[data-testid=fix-pp-split]');
  await fix.waitFor();
  // The article's answer: 14,15,14 -> 15,16,12.
  assert.match(await fix.innerText(), /^--pp-layer-partition 15,16,12 \(now 14,15,14\)/);
  assert.match(await page.locator('[data-testid=verdict-headline]').innerText(), /^Fails at KV cache sizing/);
  await fix.locator('[data-testid=fix-apply]').click();
  await page.waitForFunction(() => /^Starts/.test(document.querySelector('[data-testid=verdict-headline]')?.textContent ?? ''));
  assert.match(page.url(), /pp-partition=15%2C16%2C12|pp-partition=15,16,12/);
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-phase-serving]')?.dataset.state === 'ok');
  // Back returns to the failing scenario.
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-phase-kv_sizing]')?.dataset.state === 'fail');
  assertClean(problems);
  await context.close();
});

test('a load failure: more TP, and its link opens a scenario that starts', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct');
  const fix = page.locator('[data-testid=fix-more-tp]');
  await fix.waitFor();
  assert.match(await fix.innerText(), /^--tensor-parallel-size 4 \(now 1\): starts: [\d.]+ full-length requests of 131,072 tokens at once/);
  const href = await fix.locator('[data-testid=fix-link]').getAttribute('href');
  assert.match(href, /tp=4/);
  await page.goto(new URL(href, page.url()).href);
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-phase-serving]')?.dataset.state === 'ok');
  // A started scenario is offered what holds more.
  assert.match(await page.locator('#fixes').innerText(), /It starts\. What it would take to hold more full-length requests/);
  assertClean(problems);
  await context.close();
});
