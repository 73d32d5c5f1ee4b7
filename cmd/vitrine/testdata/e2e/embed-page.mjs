// Opens a page of another origin that embeds a Vitrine post the way a WordPress site embeds one:
// the oEmbed `html` (a blockquote and a sandboxed iframe of the post's embed page, served by an
// edge) and the post's featured image, from the edge's media files. Environment: PAGE_URL,
// SHOT (where to save a screenshot), CHROMIUM. Prints one JSON line with what the browser saw;
// exits 1 on any failure.
import { chromium } from 'playwright-core';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await page.goto(process.env.PAGE_URL);
  const img = page.locator('#featured');
  await page.waitForFunction(() => { const i = document.getElementById('featured'); return i.complete && i.naturalWidth > 0; }, null, { timeout: 10000 });
  out.imageWidth = await img.evaluate((i) => i.naturalWidth);
  out.imageHeight = await img.evaluate((i) => i.naturalHeight);
  const iframe = page.locator('iframe.wp-embedded-content');
  await iframe.waitFor({ state: 'attached', timeout: 10000 });
  // The sandboxed iframe is shown once it announced itself (WordPress hides it until then).
  const frame = await (await iframe.elementHandle()).contentFrame();
  await frame.waitForLoadState('load', { timeout: 10000 });
  out.frameURL = frame.url();
  out.frameTitle = (await frame.locator('.wp-embed-heading').first().textContent({ timeout: 10000 })).trim();
  out.frameImages = await frame.evaluate(() => [...document.images].filter((i) => i.complete && i.naturalWidth > 0).length);
  out.iframeVisible = await iframe.isVisible();
  out.consoleErrors = consoleErrors;
  if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT, fullPage: true });
} catch (e) {
  out.error = String(e && (e.stack || e.message || e));
}
await browser.close();
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
