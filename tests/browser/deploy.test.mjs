// Bring your own deployment: a pasted vllm serve command or startup log becomes the scenario,
// the log's figures are set beside Headroom's predictions, and the scenario is copied back as
// a command that plans the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, open, assertClean, text } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function openDeploy(path = '/', options = {}) {
  const o = await open(browser, path, options);
  await o.page.waitForSelector('[data-testid=deploy]');
  await o.page.click('[data-testid=deploy] > summary');
  return o;
}

const query = (page) => new URL(page.url()).searchParams;

test('paste a command: its flags and environment become the scenario, every flag accounted for', async () => {
  const { context, page, problems } = await openDeploy();
  await page.fill('[data-testid=command-input]', [
    'export VLLM_PP_LAYER_PARTITION=40,40',
    'docker run --gpus all -e CUDA_VISIBLE_DEVICES=0,1,2,3 vllm/vllm-openai:v0.20.1 \\',
    '  --model meta-llama/Llama-3.1-70B-Instruct -tp 2 -pp 2 --max-model-len 32k --port 8000 --enable-lora',
  ].join('\n'));
  await page.click('[data-testid=command-import]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('tp') === '2');
  const q = query(page);
  assert.equal(q.get('model'), 'llama-3.1-70b-instruct');
  assert.equal(q.get('pp'), '2');
  assert.equal(q.get('pp-partition'), '40,40');
  assert.equal(q.get('gpus'), '4');
  assert.equal(q.get('max-model-len'), '32000', "vLLM reads 32k as 32,000");
  assert.equal(q.get('vllm'), '0.20.1', 'the image tag names the release');
  const result = await text(page, 'command-result');
  assert.match(result, /tensor_parallel_size = 2 \(-tp, line 3\)/);
  assert.match(result, /--port 8000: does not change the start-up memory plan/);
  assert.match(result, /--enable-lora: not modelled yet: LoRA adapters/);
  assert.equal(await text(page, 'command-error'), '');
  assert.match(await text(page, 'verdict-headline'), /^Starts/);
  // Back returns to the scenario the import replaced.
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.get('tp'));
  assertClean(problems);
  await context.close();
});

test('a command Headroom cannot read, or whose model it does not know, says so by name', async () => {
  const { context, page, problems } = await openDeploy();
  await page.fill('[data-testid=command-input]', "vllm serve m --served-model-name 'open quote");
  await page.click('[data-testid=command-import]');
  await page.locator('[data-testid=command-error]').filter({ hasText: /quote/ }).waitFor();
  assert.match(await text(page, 'command-error'), /Not read: .*quote/);
  await page.fill('[data-testid=command-input]', 'hello world');
  await page.click('[data-testid=command-import]');
  await page.locator('[data-testid=command-error]').filter({ hasText: /vllm/ }).waitFor();
  // An unknown model: the flags are set and the page asks for its config.json.
  await page.fill('[data-testid=command-input]', 'vllm serve someone/private-13b -tp 2 --max-model-len 8192');
  await page.click('[data-testid=command-import]');
  await page.waitForSelector('[data-testid=command-unknown-model]');
  assert.match(await text(page, 'command-unknown-model'), /someone\/private-13b.*config\.json/);
  assert.equal(query(page).get('tp'), '2');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'config', 'the config box takes the keyboard');
  assertClean(problems);
  await context.close();
});

const LOG = [
  '(APIServer pid=1) INFO 11-20 10:00:00 [api_server.py:1] vLLM API server version 0.20.1',
  "(APIServer pid=1) INFO 11-20 10:00:00 [utils.py:1] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, 'gpu_memory_utilization': 0.9, 'port': 8001}",
  '(EngineCore pid=7) INFO 11-20 10:00:30 [gpu_model_runner.py:1] Model loading took 14.99 GiB memory and 20.1 seconds',
  '(EngineCore pid=7) INFO 11-20 10:00:40 [gpu_worker.py:1] Available KV cache memory: 54.2 GiB',
  '(EngineCore pid=7) INFO 11-20 10:00:40 [kv_cache_utils.py:1] GPU KV cache size: 443,968 tokens',
  '(EngineCore pid=7) INFO 11-20 10:00:40 [kv_cache_utils.py:1] Maximum concurrency for 32,768 tokens per request: 13.55x',
].join('\n');

test('paste a log: its flags and figures are planned, and predicted stands beside measured', async () => {
  const { context, page, problems } = await openDeploy();
  await page.fill('[data-testid=log-input]', LOG);
  await page.click('[data-testid=log-import]');
  await page.waitForSelector('[data-testid=log-comparison]');
  const q = query(page);
  assert.equal(q.get('max-model-len'), '32768');
  assert.equal(q.get('util'), '0.9');
  assert.equal(q.get('vllm'), '0.20.1');
  assert.ok(q.get('available-kv'), 'the pool is a measured input');
  const rows = await page.$$eval('[data-testid=log-comparison] tbody tr', (trs) =>
    trs.map((tr) => [tr.dataset.figure, ...[...tr.querySelectorAll('td')].map((td) => td.textContent)]));
  const byFigure = Object.fromEntries(rows.map((r) => [r[0], r.slice(1)]));
  assert.deepEqual(Object.keys(byFigure), ['model_loading', 'available_kv_cache', 'gpu_kv_cache_tokens', 'max_concurrency', 'max_concurrency.tokens_per_request']);
  assert.equal(byFigure.available_kv_cache[1], '54.20 GiB');
  assert.match(byFigure.available_kv_cache[0], /^\d+\.\d\d GiB$/);
  assert.match(byFigure.available_kv_cache[2], /^[+−]\d+\.\d\d GiB \([+-]\d+\.\d %\)$/);
  assert.equal(byFigure.gpu_kv_cache_tokens[1], '443,968 tokens');
  assert.match(await text(page, 'log-result'), /What the log implies/);
  // The form's badge says the pool is measured, and where from.
  const badge = page.locator('#available-kv-field .badge').first();
  assert.equal(await badge.textContent(), 'measured');
  assert.match(await badge.getAttribute('title'), /read from the log, line 4: Available KV cache memory: 54\.2 GiB/);
  // The prediction follows the inputs: a smaller utilization moves it, the measurement stays.
  const before = byFigure.available_kv_cache[0];
  await page.fill('[data-testid=gpu-memory-utilization]', '0.8');
  await page.waitForFunction((b) => {
    const td = document.querySelector('[data-testid=log-comparison] tr[data-figure=available_kv_cache] td');
    return td && td.textContent !== b;
  }, before);
  assert.equal(await page.locator('[data-testid=log-comparison] tr[data-figure=available_kv_cache] td').nth(1).textContent(), '54.20 GiB');
  assertClean(problems);
  await context.close();
});

test('a log from a file, a log that says nothing, and two launches pasted together', async () => {
  const { context, page, problems } = await openDeploy();
  const dir = mkdtempSync(join(tmpdir(), 'headroom-log-'));
  const file = join(dir, 'vllm.log');
  // ANSI colours and a progress bar's carriage returns, as a terminal saved them.
  writeFileSync(file, '\u001b[1;36m(EngineCore_DP0 pid=9)\u001b[0m INFO 01-01 [gpu_worker.py:1] Available KV cache memory: 6.51 GiB\r\nCapturing CUDA graphs: 50%\rCapturing CUDA graphs: 100%\n');
  await page.setInputFiles('[data-testid=log-file]', file);
  await page.waitForSelector('[data-testid=log-comparison]');
  assert.match(await page.inputValue('[data-testid=log-input]'), /Available KV cache memory: 6\.51 GiB/);
  assert.equal(await page.locator('[data-testid=log-comparison] tr[data-figure=available_kv_cache] td').nth(1).textContent(), '6.51 GiB');
  await page.fill('[data-testid=log-input]', 'nothing vLLM printed\n');
  await page.click('[data-testid=log-import]');
  await page.locator('[data-testid=log-error]').filter({ hasText: /no line Headroom reads/ }).waitFor();
  await page.fill('[data-testid=log-input]', 'Available KV cache memory: 6.51 GiB\nGPU KV cache size: 1,000 tokens\nAvailable KV cache memory: 9.10 GiB\n');
  await page.click('[data-testid=log-import]');
  await page.locator('[data-testid=log-error]').filter({ hasText: /contradict each other/ }).waitFor();
  assertClean(problems);
  await context.close();
});

test('copy the exported command; pasted back, it plans the same scenario', async () => {
  const path = '/?v=1&model=llama-3.1-70b-instruct&tp=4&max-model-len=8192&util=0.85&kv-dtype=fp8';
  const { context, page, problems } = await openDeploy(path, {
    context: { permissions: ['clipboard-read', 'clipboard-write'] },
  });
  await page.waitForFunction(() => document.querySelector('[data-testid=command-export]')?.textContent.includes('vllm serve'));
  const shown = await text(page, 'command-export');
  assert.match(shown, /^# vLLM 0\.33 on 4 x NVIDIA H100/);
  assert.match(shown, /CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama\/Llama-3\.1-70B-Instruct/);
  assert.match(shown, /--tensor-parallel-size 4/);
  assert.match(shown, /--kv-cache-dtype fp8/);
  await page.click('[data-testid=copy-command]');
  await page.locator('#link-status').filter({ hasText: /Copied|refused/ }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  if (copied) assert.equal(copied, shown);
  const before = query(page);
  await page.fill('[data-testid=command-input]', shown);
  await page.click('[data-testid=command-import]');
  await page.waitForSelector('[data-testid=command-result] ul');
  const after = query(page);
  for (const k of ['model', 'tp', 'max-model-len', 'util', 'kv-dtype']) {
    assert.equal(after.get(k), before.get(k), k);
  }
  assertClean(problems);
  await context.close();
});
