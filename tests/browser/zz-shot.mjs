import { launch } from './harness.mjs';
const b = await launch();
const ctx = await b.newContext({ viewport: { width: 1280, height: 900 } });
const p = await ctx.newPage();
await p.goto(process.env.BASE_URL + (process.env.Q ?? '/'));
await p.waitForSelector('[data-testid=rank-chart] svg');
await p.waitForTimeout(300);
await p.screenshot({ path: process.env.OUT ?? '/tmp/shot.png', fullPage: process.env.FULL === '1' });
await b.close();
