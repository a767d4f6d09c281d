// Input change -> DOM update, two builds side by side in one browser (not a test: it prints
// numbers). Both pages open the same link; rounds alternate between them, so machine load
// falls on both alike. Per change: from the input event to the MutationObserver's first call
// (the whole run of effects the change starts).
//
//   node scripts/ab-input.mjs http://127.0.0.1:8766 http://127.0.0.1:8765
//   LINK='?v=1&model=qwen3-32b&tp=2&gpu=a100-sxm4-80gb' FIELD=max-model-len VALUES=8192,32768 \
//     ROUNDS=15 node scripts/ab-input.mjs A B
import { chromium } from 'playwright-core';

const bases = process.argv.slice(2);
if (bases.length < 1) throw new Error('usage: node scripts/ab-input.mjs BASE_URL [BASE_URL ...]');
const link = process.env.LINK ?? '?v=1&model=qwen3-32b&tp=2&max-model-len=32768&gpu=a100-sxm4-80gb';
const field = process.env.FIELD ?? 'gpu-memory-utilization';
const values = (process.env.VALUES ?? '0.85,0.9').split(',');
const rounds = Number(process.env.ROUNDS ?? 15);
const per = Number(process.env.CHANGES ?? 20);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const pages = [];
for (const base of bases) {
  const ctx = await browser.newContext({ serviceWorkers: 'block' });
  const page = await ctx.newPage();
  await page.goto(`${base}/${link}`);
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached', timeout: 20000 });
  await page.waitForTimeout(500);
  pages.push(page);
}
const times = bases.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < pages.length; i++) {
    const out = await pages[i].evaluate(async ([field, values, n]) => {
      const input = document.querySelector(`[data-testid="${field}"]`);
      const res = [];
      for (let k = 0; k < n; k++) {
        const value = values[k % values.length];
        const t = await new Promise((resolve) => {
          const mo = new MutationObserver(() => {
            mo.disconnect();
            resolve(performance.now() - t0);
          });
          mo.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
          input.value = value;
          const t0 = performance.now();
          input.dispatchEvent(new Event('input', { bubbles: true }));
        });
        res.push(t);
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 20)));
      }
      return res;
    }, [field, values, per]);
    times[i].push(...out);
  }
}
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
console.log(`${link} ${field} ${values.join('/')}: ${rounds} rounds x ${per} changes per build`);
bases.forEach((b, i) => {
  const t = times[i];
  console.log(`  ${b}: median ${q(t, 0.5).toFixed(2)} ms (quartiles ${q(t, 0.25).toFixed(2)}-${q(t, 0.75).toFixed(2)}, n=${t.length})`);
});
await browser.close();
