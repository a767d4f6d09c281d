// The phase timeline (issue 17, item 1): one rank's start, phase by phase, with each phase's
// state, the failing one named and framed, the knobs that act there and those that do not,
// and the other ranks where they differ. The expected states are the plan's own, as
// `headroom plan --example ID --json` gives them (first_failure, the failing check's rank).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, assertClean, setInput } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const PHASES = ['init', 'load', 'profile', 'kv_sizing', 'capacity', 'graphs', 'serving'];

async function states(page) {
  await page.locator('[data-testid=phase-timeline]').waitFor();
  return page.$$eval('[data-testid^="timeline-phase-"]', (els) =>
    els.map((e) => [e.dataset.testid.replace('timeline-phase-', ''), e.dataset.state]),
  );
}

/** Every phase before `stop` passes, `stop` fails, the rest are not reached (or all pass). */
function expected(stop) {
  const at = stop ? PHASES.indexOf(stop) : PHASES.length;
  return PHASES.map((p, i) => [p, i < at ? 'ok' : i === at ? 'fail' : 'not-reached']);
}

for (const [what, path, stop, rank] of [
  // Seed 000: the last stage of three decides, at KV sizing (its auto-fit finds no length).
  ['seed 000 (three cards, PP=3)', '/?v=1&example=s1-three-cards', 'kv_sizing', '2'],
  // Seed 002 and 003 start.
  ['seed 002 (the unified-memory gate)', '/?v=1&example=s2-unified-gate', null, null],
  ['seed 003 (synthetic TP=4)', '/?v=1&example=s3-synthetic-tp4', null, null],
  // A load failure: 405B in FP8 on one H100.
  ['a load failure', '/?v=1&model=llama-3.1-405b-instruct-fp8', 'load', '0'],
]) {
  test(`the timeline of ${what}`, async () => {
    const { context, page, problems } = await open(browser, path);
    assert.deepEqual(await states(page), expected(stop));
    const timeline = page.locator('[data-testid=phase-timeline]');
    if (rank !== null) {
      // It opens at the rank that decides, and the verdict names the same phase.
      assert.equal(await timeline.getAttribute('data-rank'), rank);
      const failing = page.locator(`[data-testid="timeline-phase-${stop}"]`);
      assert.match(await failing.innerText(), /fails here/);
      assert.equal(await page.locator(`[data-testid="timeline-bar-${stop === 'graphs' ? 'allocation' : stop}"][data-state=fail]`).count(), 1);
    }
    // Seven bars, the budget and the capacity marks, each with its exact figure.
    assert.equal(await page.locator('[data-testid^="timeline-bar-"]').count(), 7);
    for (const term of ['budget', 'total']) {
      const title = await page.locator(`[data-testid=timeline-chart] .hit[data-term=${term}] title`).textContent();
      assert.match(title, /\d B\)$/, term);
    }
    // The utilization acts at the init check and KV sizing only.
    for (const p of PHASES) {
      const entry = await page.locator(`[data-testid="timeline-phase-${p}"] .knobs`).innerText();
      const acts = /Acts here: ([^.]*)\./.exec(entry)?.[1] ?? '';
      const not = /Does not act here: ([^.]*)\./.exec(entry)?.[1] ?? '';
      const util = acts.includes('gpu-memory-utilization');
      assert.equal(util, p === 'init' || p === 'kv_sizing', `${p}: ${entry}`);
      if (!util) assert.match(not, /gpu-memory-utilization/, p);
    }
    assertClean(problems);
    await context.close();
  });
}

test('ranks that differ: the other ranks are named, and another rank can be opened', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s1-three-cards');
  await states(page);
  const select = page.locator('[data-testid=timeline-rank]');
  assert.equal(await select.locator('option').count(), 3);
  assert.match(await page.locator('[data-testid=timeline-phase-kv_sizing]').innerText(), /Other ranks: rank 0: passes/);
  // Rank 0 passes the KV sizing the last stage fails; vLLM stops at rank 2, so its later
  // phases are not reached.
  await select.selectOption('0');
  await page.waitForFunction(() => document.querySelector('[data-testid=phase-timeline]')?.dataset.rank === '0');
  assert.deepEqual((await states(page)).slice(0, 5).map(([, s]) => s), ['ok', 'ok', 'ok', 'ok', 'not-reached']);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'timeline-rank');
  // A change of the inputs keeps the rank picked.
  await setInput(page, 'gpu-memory-utilization', '0.89');
  await page.waitForFunction(() =>
    document.querySelector('[data-testid=timeline-phase-init]')?.textContent.includes('x 0.89)'),
  );
  assert.equal(await page.locator('[data-testid=phase-timeline]').getAttribute('data-rank'), '0');
  assertClean(problems);
  await context.close();
});
