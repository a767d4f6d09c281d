// The seed walkthroughs (issue 17, item 4): each opens at its article's start and steps through
// the story one input at a time; each step is a link with the `step` key; the panels follow.
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

const current = (page) => page.locator('[data-testid=walkthrough-step][aria-current=step]').getAttribute('data-step');

test('seed 000: the budget moves 3.2 GiB per step, the load phase does not, then the split starts', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s1-three-cards');
  const walk = page.locator('[data-testid=walkthrough]');
  await walk.waitFor();
  assert.equal(await page.locator('[data-testid=walkthrough-step]').count(), 6);
  await page.click('[data-testid=walkthrough-next]');
  await page.waitForFunction(() => location.search.includes('step=1'));
  assert.match(page.url(), /util=0\.85/);
  await page.waitForFunction(() => document.querySelector('[data-testid=walkthrough-step][aria-current=step]')?.dataset.step === '1');
  await page.click('[data-testid=walkthrough-next]');
  await page.waitForFunction(() => location.search.includes('step=2'));
  await page.waitForFunction(() => document.querySelector('[data-testid=walkthrough-step][aria-current=step]')?.dataset.step === '2');
  const two = await page.locator('[data-testid=walkthrough-step][data-step="2"]').innerText();
  assert.match(two, /Budget 53\.98 GiB -> 57\.15 GiB \(\+3\.1[78] GiB\); the load phase's peak unchanged at/);
  // The panels follow the step: the init check's sentence names 0.9.
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-phase-init]')?.textContent.includes('x 0.9)'));
  // The last step, by its link: the split the article lands on starts.
  // The split the reports could not start (without --max-model-len): the capacity check.
  await page.click('[data-testid=walkthrough-step][data-step="5"] a');
  await page.waitForFunction(() => location.search.includes('step=5'));
  assert.match(page.url(), /max-model-len=1048576/);
  await page.waitForFunction(() => /^Fails at the capacity check/.test(document.querySelector('[data-testid=verdict-headline]')?.textContent ?? ''));
  await page.click('[data-testid=walkthrough-step][data-step="6"] a');
  await page.waitForFunction(() => location.search.includes('step=6'));
  assert.match(page.url(), /pp-partition=15%2C16%2C12|pp-partition=15,16,12/);
  await page.waitForFunction(() => /^Starts/.test(document.querySelector('[data-testid=verdict-headline]')?.textContent ?? ''));
  assert.equal(await current(page), '6');
  assert.equal(await page.locator('[data-testid=walkthrough-next]').isDisabled(), true);
  // Back steps back.
  await page.goBack();
  await page.waitForFunction(() => location.search.includes('step=5'));
  assertClean(problems);
  await context.close();
});

test("a step's link opens that step: seed 003's demand against the pool", async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s3-synthetic-tp4&unit=gb&max-num-seqs=256&step=2');
  await page.locator('[data-testid=walkthrough]').waitFor();
  assert.equal(await current(page), '2');
  const two = await page.locator('[data-testid=walkthrough-step][data-step="2"]').innerText();
  assert.match(two, /Demand: max-num-seqs 256 x max-model-len 131,072 = 10,995\.12 GB across the replica, against a pool that holds 4\.29 full-length requests/);
  assertClean(problems);
  await context.close();
});

test("seed 002's gate, row by row; a page with no example has no walkthrough", async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s2-unified-gate&kv-bytes=16e9&step=3');
  await page.locator('[data-testid=walkthrough]').waitFor();
  const rows = await page.locator('[data-testid=walkthrough-step]').allInnerTexts();
  assert.equal(rows.length, 4);
  assert.match(rows[0], /needs 108\.14 GiB against MemAvailable 114\.50 GiB: it passes/);
  assert.match(rows[2], /needs 115\.59 GiB against MemAvailable 114\.50 GiB: it refuses the start/);
  await page.goto(new URL('/?v=1&model=llama-3.1-8b-instruct', page.url()).href);
  await page.locator('[data-testid=phase-timeline]').waitFor();
  assert.equal(await page.locator('[data-testid=walkthrough]').count(), 0);
  assertClean(problems);
  await context.close();
});
