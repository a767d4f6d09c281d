// The three seed systems: each example shows its article's figures, at the article's precision
// (seed-cases.md). Figures are read from their data-testids.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, assertClean, text, number, changed, setInput, near, reveal } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function loadExample(page, id) {
  const before = await text(page, 'verdict');
  await page.click(`[data-testid="example-${id}"]`);
  await page.waitForFunction((x) => location.search.includes(`example=${x}`), id);
  await changed(page, 'verdict', before).catch(() => {});
}

test('S3: a synthetic TP=4 worker, in decimal GB', async () => {
  const { context, page, problems } = await open(browser, '/');
  await loadExample(page, 's3-synthetic-tp4');
  assert.match(page.url(), /unit=gb/);
  const pool = await text(page, 'kv-pool');
  assert.match(pool, / GB$/);
  near(await number(page, 'kv-pool'), 46.1, 0.05, 'KV pool per rank (GB)');
  near(await number(page, 'max-concurrency'), 4.29, 0.005, 'full-length requests in the pool');
  assert.equal(await number(page, 'full-length-requests'), 4);
  near(await number(page, 'budget'), 73.6, 0.005, 'executor budget (GB)');
  near(await number(page, 'rank-0-weights'), 17.5, 0.005, 'resident weights (GB)');
  assert.equal(await page.locator('[data-testid^="rank-bar-"]').count(), 4);
  assert.match(await text(page, 'verdict'), /^Starts: 4\.29 full-length requests fit per replica/);
  assertClean(problems);
  await context.close();
});

test('S2: the unified-memory start gate with the KV pool pinned at 10e9', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s2-unified-gate');
  near(await number(page, 'kv-pool'), 9.31, 0.005, 'KV pool (GiB)');
  assert.equal(await number(page, 'kv-cache-tokens'), 181777);
  // Without the drafter the gate needs 110.0 GiB; with its 5.06 GiB, 115.1 GiB.
  await setInput(page, 'kv-cache-memory-bytes', '10e9');
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'none');
  await page.waitForFunction(() => location.search.includes('spec=none'));
  near(await number(page, 'gate-needs'), 110.0, 0.05, 'needs without the drafter (GiB)');
  const needs = await text(page, 'gate-needs');
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'deepseek_mtp');
  await setInput(page, 'drafter-weights', '5.06GiB');
  await changed(page, 'gate-needs', needs);
  near(await number(page, 'gate-needs'), 115.1, 0.05, 'needs with the drafter (GiB)');
  near(await number(page, 'gate-available'), 114.5, 0.05, 'MemAvailable (GiB)');
  assert.equal(await text(page, 'gate-verdict'), 'refused');
  assertClean(problems);
  await context.close();
});

test('S1: three cards, PP=3: budgets by utilization and the default split', async () => {
  const { context, page, problems } = await open(browser, '/');
  await loadExample(page, 's1-three-cards');
  assert.match(await text(page, 'pp-partition-effective'), /Split in the figures: 14, 15, 14/);
  for (const [i, n] of [[0, '14'], [1, '15'], [2, '14']]) {
    assert.equal(await page.inputValue(`[data-testid="pp-stage-${i}"]`), n);
  }
  assert.equal(await page.locator('[data-testid^="rank-bar-"]').count(), 3);
  // No fraction leaves memory for the KV cache: the sweeps say so instead of drawing a flat line.
  await page.locator('#pool-svg .sweep-note').waitFor();
  assert.match(await page.locator('#pool-svg .sweep-note').innerText(), /^At every gpu-memory-utilization from 0\.50 to 0\.98 the start fails at KV cache sizing, with no memory left/);
  // Only the example's own length (its measured pool) gets one: the sweep draws it, red and
  // ringed (0.97 of a request fits), and names the lengths it cannot draw.
  assert.equal(await page.locator('#len-svg svg [data-current="true"][data-starts="false"]').count(), 1);
  assert.match(await page.locator('#len-svg .sweep-aside').innerText(), /^Not drawn: max-model-len 1,024 to 524,288 \(10 lengths\) fail at KV cache sizing, before a pool is sized\.$/);
  for (const [util, budget] of [['0.85', 54.0], ['0.90', 57.1], ['0.95', 60.3]]) {
    const before = await text(page, 'budget');
    await setInput(page, 'gpu-memory-utilization', util);
    if (util !== '0.90') await changed(page, 'budget', before);
    else await page.waitForFunction(() => location.search.includes('util=0.90'));
    near(await number(page, 'budget'), budget, 0.051, `budget at ${util} (GiB)`);
    near(await number(page, 'rank-2-budget'), budget, 0.051, `rank 2 budget at ${util} (GiB)`);
  }
  // The partition editor writes the whole list; a sum that misses a layer is flagged there.
  await page.fill('[data-testid="pp-stage-1"]', '16');
  await page.press('[data-testid="pp-stage-1"]', 'Enter');
  await page.locator('#pp-layer-partition-err').filter({ hasText: /43|sum/ }).waitFor();
  await page.fill('[data-testid="pp-stage-2"]', '13');
  await page.press('[data-testid="pp-stage-2"]', 'Enter');
  await page.waitForFunction(() => /pp-partition=14,16,13/.test(location.search));
  assert.equal(await page.inputValue('[data-testid="pp-layer-partition"]'), '14,16,13');
  await page.locator('#pp-layer-partition-err:empty').waitFor({ state: 'attached' });
  assert.match(await text(page, 'pp-partition-effective'), /Split in the figures: 14, 16, 13/);
  assertClean(problems);
  await context.close();
});
