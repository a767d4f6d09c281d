// A/B compare (issue 17, item 6): two scenarios side by side, the difference per rank and per
// ledger line, shareable as one link (B under the `b.` prefix).
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

test('a link with b. keys opens the comparison: 0.85 against 0.90 moves the budget, not the weights', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s1-three-cards&util=0.85&b.util=0.90');
  const view = page.locator('[data-testid=ab-view]');
  await view.waitFor();
  assert.match(await view.innerText(), /^B sets gpu-memory-utilization 0\.90\./);
  const budget = page.locator('[data-testid=ab-rank-0] tr[data-term=budget]');
  assert.equal(await budget.getAttribute('class'), 'moved');
  assert.match(await budget.innerText(), /\+3\.1[78] GiB/);
  const weights = page.locator('[data-testid=ab-rank-0] tr[data-term=weights]');
  assert.equal(await weights.getAttribute('data-a'), await weights.getAttribute('data-b'));
  assert.match(await weights.innerText(), /same$/);
  assertClean(problems);
  await context.close();
});

test('the form sets B, the link carries it, and it can be stopped', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=2');
  await page.locator('[data-testid=ab-field]').waitFor();
  await page.selectOption('[data-testid=ab-field]', 'tp');
  await page.fill('[data-testid=ab-value]', '4');
  await page.click('[data-testid=ab-set]');
  await page.waitForFunction(() => location.search.includes('b.tp=4'));
  await page.locator('[data-testid=ab-view]').waitFor();
  const verdicts = await page.locator('[data-testid=ab-verdicts] tr[data-row=verdict]').innerText();
  assert.match(verdicts, /fails at the capacity check.*starts/s);
  const w = page.locator('[data-testid=ab-rank-0] tr[data-term=weights]');
  assert.ok(Number(await w.getAttribute('data-b')) < Number(await w.getAttribute('data-a')), 'TP=4 holds less per rank');
  // A value B's input refuses is said, and nothing changes.
  await page.fill('[data-testid=ab-value]', '3.5');
  await page.click('[data-testid=ab-set]');
  assert.match(await page.locator('[data-testid=ab-error]').innerText(), /^B: /);
  assert.match(page.url(), /b\.tp=4/);
  await page.click('[data-testid=ab-clear]');
  await page.waitForFunction(() => !location.search.includes('b.'));
  assert.equal(await page.locator('[data-testid=ab-view]').count(), 0);
  assertClean(problems);
  await context.close();
});
