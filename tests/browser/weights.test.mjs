// Weights by layer kind on the page (issue 20): a pasted hybrid Mamba / latent-MoE config as
// NVIDIA publishes it (Python's `Infinity` included), the ledger's breakdown by component, a
// vision tower's own line, and a verdict that doubts an estimate far from the name's size.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, open, goto, assertClean, text } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** The `config` of a corpus file, as a link's base64url value (the file's own text, not re-serialised). */
function configParam(file, edit = (s) => s) {
  const raw = fs.readFileSync(new URL(`../corpus/weights/${file}`, import.meta.url), 'utf8');
  // The config object's text, verbatim: from `"config": {` to its matching brace.
  const start = raw.indexOf('{', raw.indexOf('"config"'));
  let depth = 0;
  let end = start;
  for (let i = start; i < raw.length; i++) {
    if (raw[i] === '{') depth++;
    if (raw[i] === '}' && --depth === 0) {
      end = i + 1;
      break;
    }
  }
  return Buffer.from(edit(raw.slice(start, end))).toString('base64url');
}

const row = (page, term) => page.locator(`[data-testid="ledger-rank-0"] tr[data-term="${term}"]`);

test('a Nemotron 3 Super config is planned layer by layer, its ledger naming each kind', async () => {
  const config = configParam('nvidia-nvidia-nemotron-3-super-120b-a12b-fp8.json');
  assert.ok(Buffer.from(config, 'base64url').toString().includes('Infinity'));
  const { context, page, problems } = await open(browser, '/');
  await goto(page, `/?tp=8&gpu=h100-sxm-80gb#config=${config}`);
  assert.match(await text(page, 'verdict-headline'), /^Starts/);
  const layers = await row(page, 'weights_layers').innerText();
  for (const kind of ['routed experts', 'Mamba mixers', 'shared experts', 'attention']) {
    assert.ok(layers.includes(kind), `${kind} in ${layers}`);
  }
  // 123.6B parameters at 2 bytes over 8 ranks, not the 348.6 GiB per rank of a misread pattern.
  const weights = await row(page, 'weights').innerText();
  assert.match(weights, /28\.79 GiB/);
  assertClean(problems);
  await context.close();
});

test('an estimate far from the size its name states is doubted in the verdict', async () => {
  const config = configParam('meta-llama-llama-3.1-8b-instruct.json', (s) =>
    s.replace('{', '{"_name_or_path": "example/Llama-3.1-70B-Instruct",'),
  );
  const { context, page, problems } = await open(browser, '/');
  await goto(page, `/?gpu=h100-sxm-80gb#config=${config}`);
  const verdict = await text(page, 'verdict');
  assert.match(verdict, /Doubtful weights: the estimate counts 8B parameters where the name says 70B \(0\.11x\); largest part: dense MLP\./);
  assertClean(problems);
  await context.close();
});

test('a multimodal model has a vision-encoder line where its tower is built', async () => {
  const { context, page, problems } = await open(browser, '/');
  await goto(page, '/?model=gemma-3-27b-it&gpu=h100-sxm-80gb&pp=2&gpus=2');
  const vision = await row(page, 'weights_vision').innerText();
  assert.match(vision, /27 blocks of 1152 wide/);
  // Model Runner V2 builds it on the first stage only.
  assert.equal(await page.locator('[data-testid="ledger-rank-1"] tr[data-term="weights_vision"]').count(), 0);
  assertClean(problems);
  await context.close();
});
