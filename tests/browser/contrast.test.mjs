// Three engines, three fractions (issue 17, item 7): the same number under vLLM, SGLang and
// TensorRT-LLM, each with its formula filled in with this scenario's figures.
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

test('the same fraction, three pools; they follow the inputs', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=4&util=0.9');
  const rows = page.locator('[data-testid=engine-contrast] li');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 3);
  const engines = await rows.evaluateAll((els) => els.map((e) => e.dataset.engine));
  assert.deepEqual(engines, ['vLLM', 'SGLang', 'TensorRT-LLM']);
  const bytes = await rows.evaluateAll((els) => els.map((e) => Number(e.dataset.bytes)));
  assert.equal(new Set(bytes).size, 3, `three different pools: ${bytes}`);
  // vLLM's row is the plan's own available KV memory, as the ledger shows it.
  assert.match(await rows.nth(0).innerText(), /--gpu-memory-utilization: [\d.]+ GiB of KV cache, [\d,]+ tokens/);
  assert.match(await rows.nth(1).innerText(), /free before loading x 0\.9 - [\d.]+ GiB weights = [\d.]+ GiB/);
  assert.match(await rows.nth(2).innerText(), /x 0\.9 = [\d.]+ GiB/);
  await setInput(page, 'gpu-memory-utilization', '0.8');
  await page.waitForFunction(() => document.querySelector('[data-testid=engine-contrast] li[data-engine=SGLang]')?.textContent.includes('x 0.8 -'));
  assertClean(problems);
  await context.close();
});

test('words one click away: a ledger term links to its explanation', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct');
  const link = page.locator('[data-testid^=ledger-rank-] tr[data-term=budget] a').first();
  await link.waitFor();
  assert.equal(await link.getAttribute('href'), '#term-budget');
  await link.click();
  await page.waitForFunction(() => location.hash === '#term-budget');
  assert.match(await page.locator('#term-budget + dd').innerText(), /ceil\(total x gpu-memory-utilization\).*vLLM: vllm\/v1\/worker\/utils\.py::request_memory/s);
  for (const key of ['null-block', 'limiting-rank', 'page', 'block', 'outside-budget', 'activation', 'graphs', 'mla', 'sliding-window']) {
    assert.equal(await page.locator(`[data-testid=term-${key}]`).count(), 1, key);
  }
  assertClean(problems);
  await context.close();
});

test('what interviewers probe next: answers with this scenario\'s numbers', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s3-synthetic-tp4&unit=gb');
  const fp8 = page.locator('[data-testid=probe-fp8-kv]');
  await fp8.waitFor();
  await fp8.locator('summary').click();
  assert.match(await fp8.innerText(), /81,920 B per token on rank 0 now, 40,960 with fp8/);
  const tp = page.locator('[data-testid=probe-divide-by-tp]');
  await tp.locator('summary').click();
  assert.match(await tp.innerText(), /max\(1, 8 KV heads \/ TP 4\) = 2/);
  // The answers follow the inputs: at TP=2, four KV heads per rank.
  await setInput(page, 'tensor-parallel-size', '2');
  await page.waitForFunction(() => document.querySelector('[data-testid=probe-divide-by-tp]')?.textContent.includes('/ TP 2) = 4'));
  assertClean(problems);
  await context.close();
});
