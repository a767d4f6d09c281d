// Issue 19, items 4 and 11: the weight format's two flags on the page, and the exports (each
// chart as SVG and PNG, the plan as JSON in the CLI's schema), downloaded and read back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { launch, open, assertClean, text, changed, setInput } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** Clicks a button and returns the download's file name and bytes. */
async function download(page, testid) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="${testid}"]`)]);
  return { name: d.suggestedFilename(), bytes: await readFile(await d.path()) };
}

test('each chart downloads as SVG and PNG, and the plan as JSON in the CLI schema', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=2&max-model-len=16384', {
    context: { acceptDownloads: true },
  });
  await page.waitForSelector('#rank-svg svg');
  await page.waitForSelector('#len-svg svg');
  for (const stem of ['headroom-rank-chart', 'headroom-concurrency-sweep', 'headroom-pool-sweep']) {
    const svg = await download(page, `${stem}-svg`);
    assert.equal(svg.name, `${stem}.svg`);
    const t = svg.bytes.toString('utf8');
    assert.match(t, /^<svg[^>]* xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(t, /<rect width="100%" height="100%" fill="#ffffff">/);
    assert.doesNotMatch(t, /class="overlay"|class="hit"/, 'the focus overlay stays on the page');
    const png = await download(page, `${stem}-png`);
    assert.equal(png.name, `${stem}.png`);
    assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
    // Twice the chart's viewBox: 1440 px wide on a desktop.
    assert.equal(png.bytes.readUInt32BE(16), 1440);
  }
  const json = await download(page, 'download-json');
  assert.equal(json.name, 'headroom-plan.json');
  const plan = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(plan.starts, true);
  assert.equal(plan.tp, 2);
  assert.equal(plan.ranks.length, 2);
  assert.equal(plan.input.model.name, 'Llama 3.1 70B Instruct');
  assert.equal(plan.input.quantization, null);
  assertClean(problems);
  await context.close();
});

test('--quantization and --dtype in the form: online FP8, an assumed AWQ checkpoint, a refused dtype', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=2');
  const weights = async () => Number((await text(page, 'ledger-rank-0')).match(/Weights \(Model loading took\)\s+([\d.]+) GiB/)[1]);
  const bf16 = await weights();
  let before = await text(page, 'verdict');
  await page.selectOption('[data-testid="quantization"]', 'fp8_per_tensor');
  await page.waitForFunction(() => location.search.includes('quantization=fp8_per_tensor'));
  await changed(page, 'verdict', before);
  const fp8 = await weights();
  assert.ok(fp8 < bf16 * 0.55 && fp8 > bf16 * 0.45, `${fp8} GiB against ${bf16} GiB`);
  assert.match(await text(page, 'verdict'), /\(FP8\) on 2 x NVIDIA H100 SXM 80GB.*quantization fp8_per_tensor/s);
  // Under the field: what the choice means for the bytes.
  await page.waitForFunction(() => /^Online: vLLM quantizes this checkpoint as it loads it: FP8 weights with one scale per tensor/.test(document.querySelector('[data-testid=quantization-source]').textContent));
  before = await text(page, 'verdict');
  await page.selectOption('[data-testid="quantization"]', 'awq');
  await changed(page, 'verdict', before);
  assert.match(await text(page, 'verdict'), /INT4 \(group 128\), an assumed awq checkpoint/);
  assert.match(await text(page, 'notes'), /Cannot find the config file for awq/);
  // A link's own spellings show as chosen: vLLM's 'half', and a method an older release had.
  await page.goto(new URL('/?v=1&model=llama-3.1-8b-instruct&dtype=half&quantization=bitsandbytes&vllm=0.27', page.url()).href);
  await page.waitForFunction(() => document.querySelector('[data-testid="dtype"]')?.value === 'half');
  assert.equal(await page.inputValue('[data-testid="quantization"]'), 'bitsandbytes');
  assert.match(await text(page, 'verdict'), /quantization bitsandbytes, dtype float16/);
  // float16 on Gemma 3 is vLLM's refusal, said at the field.
  await page.goto(new URL('/?v=1&model=gemma-3-27b-it&dtype=float16', page.url()).href);
  await page.waitForSelector('#dtype-err:not(:empty)');
  assert.match(await page.locator('#dtype-err').innerText(), /does not support float16/);
  assert.match(await text(page, 'verdict-headline'), /^Cannot plan this: vLLM refuses --dtype float16 for this model/);
  assertClean(problems);
  await context.close();
});

test('a pasted model.safetensors.index.json becomes the checkpoint size in the link and scales the weights', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct');
  const index = JSON.stringify({ metadata: { total_size: 17000000000 }, weight_map: Object.fromEntries([...Array(3000).keys()].map((i) => [`model.layers.${i}.w`, 'model-00001-of-00004.safetensors'])) });
  await setInput(page, 'checkpoint-bytes', index);
  await page.waitForFunction(() => location.search.includes('checkpoint-bytes=17000000000'));
  await page.waitForFunction(() => /to the checkpoint's 17,000,000,000 bytes/.test(document.querySelector('[data-testid=ledger]').innerText));
  assert.equal(await page.inputValue('[data-testid="checkpoint-bytes"]'), '17000000000');
  assertClean(problems);
  await context.close();
});
