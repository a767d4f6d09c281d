// Diagnose from a symptom (issue 17, item 2): pasted errors from public threads (each cited)
// are read as their symptom, against the scenario of the page; the move names this scenario's
// numbers; a pasted error's own figures fill the scenario in one click.
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

async function paste(page, text) {
  await page.fill('[data-testid=diagnose-input]', text);
  await page.click('[data-testid=diagnose-run]');
  await page.locator('[data-testid=diagnose-result] > *').first().waitFor();
  return page.locator('[data-testid=diagnose-result]');
}

const CASES = [
  {
    // https://github.com/vllm-project/vllm/issues/10439 (vLLM 0.6.4.post1)
    what: 'no cache blocks, at a low utilization',
    path: '/?v=1&model=llama-3.1-70b-instruct&tp=2&gpu=h100-sxm-80gb&util=0.82',
    text: 'vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.',
    symptom: 'no-cache-blocks',
    phase: 'kv_sizing',
    moves: /Raise --gpu-memory-utilization from 0\.82 to at least 0\.86\d*, where KV sizing finds blocks/,
    scenario: /fails at the same phase/,
  },
  {
    // https://github.com/vllm-project/vllm/issues/34076 (vLLM 0.15.2rc1)
    what: 'one request does not fit, on two stages',
    path: '/?v=1&model=llama-3.1-70b-instruct&pp=2&gpu=h100-sxm-80gb',
    text: "(EngineCore_DP0 pid=1094) ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated maximum model length is 34736.",
    symptom: 'to-serve-one-request',
    phase: 'capacity',
    moves: /Lower --max-model-len from 131,072 to at most [\d,]+ tokens/,
    scenario: /fails at the same phase/,
  },
  {
    // https://github.com/vllm-project/vllm/issues/28143
    what: 'an OOM while creating the weights',
    path: '/?v=1&model=llama-3.1-70b-instruct&gpu=h100-sxm-80gb',
    text: '(EngineCore_DP0 pid=12473) ERROR 11-05 12:19:32 [linear.py:210] Failed to create unquantized linear weights: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity of 93.09 GiB of which 739.81 MiB is free.\n  File "vllm/model_executor/layers/linear.py", line 202, in create_weights',
    symptom: 'oom-loading',
    phase: 'load',
    moves: /at --tensor-parallel-size 2 a rank loads [\d.]+ GiB \(now [\d.]+ GiB\), which fits/,
    scenario: /fails at the same phase/,
  },
  {
    // https://github.com/vllm-project/vllm/issues/19186
    what: 'an OOM in CUDA graph capture',
    path: '/?v=1&model=llama-3.1-8b-instruct&gpu=h100-sxm-80gb&max-model-len=8192&kv-bytes=70GiB',
    text: '(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470]     with torch.cuda.graph(cudagraph, pool=self.graph_pool):\n(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] RuntimeError: CUDA error: out of memory',
    symptom: 'oom-graph-capture',
    phase: 'allocation',
    moves: /--enforce-eager: no CUDA graphs, [\d.]+ GiB freed per rank/,
    scenario: /fails at the same phase/,
  },
  {
    // https://github.com/vllm-project/vllm/issues/56824 (a DGX Spark, GB10)
    what: 'NV_ERR_NO_MEMORY on unified memory',
    path: '/?v=1&example=s2-unified-gate',
    text: 'nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359',
    symptom: 'nv-err-no-memory',
    phase: 'allocation',
    moves: /Pin the pool in bytes: --kv-cache-memory-bytes at most [\d,]+ here/,
    scenario: /starts/,
  },
];

for (const c of CASES) {
  test(`diagnose a pasted error: ${c.what}`, async () => {
    const { context, page, problems } = await open(browser, c.path);
    const result = await paste(page, c.text);
    const d = result.locator('[data-symptom]');
    assert.equal(await d.getAttribute('data-symptom'), c.symptom);
    assert.equal(await d.getAttribute('data-phase'), c.phase);
    // The choice shows what the text was read as.
    assert.equal(await page.inputValue('[data-testid=diagnose-symptom]'), c.symptom);
    assert.match(await page.locator('[data-testid=diagnose-moves]').innerText(), c.moves);
    assert.match(await page.locator('[data-testid=diagnose-scenario]').innerText(), c.scenario);
    for (const id of ['diagnose-proves', 'diagnose-not', 'diagnose-disproof']) {
      assert.ok((await page.locator(`[data-testid=${id}]`).innerText()).length > 40, id);
    }
    assertClean(problems);
    await context.close();
  });
}

test("a pasted init error's own figures fill the scenario, which then fails where vLLM did", async () => {
  // https://github.com/vllm-project/vllm/issues/20305 (vLLM 0.9.1)
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct&gpu=l40s-48gb');
  const result = await paste(page, '[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.');
  assert.match(await result.innerText(), /free at start 31\.44 GiB of 47\.38 GiB; 0\.95 of it asked for is 45\.01 GiB, so other processes held 15\.94 GiB/);
  assert.match(await page.locator('[data-testid=diagnose-scenario]').innerText(), /starts: the machine differs/);
  assert.match(await page.locator('[data-testid=diagnose-moves]').innerText(), /at most 0\.66 \(the error's free \/ total\)/);
  await page.click('[data-testid=diagnose-fill]');
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-phase-init]')?.dataset.state === 'fail');
  assert.match(page.url(), /util=0\.95/);
  await page.waitForFunction(() => document.querySelector('[data-testid=diagnose-scenario]')?.textContent.includes('fails at the same phase'));
  assertClean(problems);
  await context.close();
});

test('a symptom picked, and a text that is no vLLM error', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s1-three-cards');
  // Seed 000: two budgets failing at the same line is evidence against a capacity cause.
  await page.selectOption('[data-testid=diagnose-symptom]', 'same-failure-two-budgets');
  await page.locator('[data-testid=diagnose-result] [data-symptom]').waitFor();
  assert.match(await page.locator('[data-testid=diagnose-proves]').innerText(), /evidence against a capacity \(KV\) cause/);
  assert.match(await page.locator('[data-testid=diagnose-moves]').innerText(), /This scenario fails at KV cache sizing; move what acts there: gpu-memory-utilization, kv-cache-memory-bytes/);
  const result = await paste(page, 'hello, world');
  assert.match(await result.innerText(), /^Not read: no vLLM start-up error Headroom knows is in the text/);
  // An OOM without its traceback is not guessed.
  assert.match(await (await paste(page, 'torch.OutOfMemoryError: CUDA out of memory.')).innerText(), /does not say in which phase/);
  assertClean(problems);
  await context.close();
});
