// Drives storefront.html in headless Chromium: browse, add to cart, check out as a guest, read
// the product with the write's version floor. Environment: STOREFRONT_URL (the page, with its
// ?api= and ?tenant= query), CHROMIUM (default /usr/bin/chromium). Prints one JSON line with what
// the page showed; exits 1 on any failure.
import { chromium } from 'playwright-core';

const url = process.env.STOREFRONT_URL;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await page.goto(url);
  await page.locator('[data-test=product]').first().waitFor({ timeout: 10000 });
  await page.locator('[data-test=product] button').first().click();
  await page.locator('#cart-count', { hasText: '1' }).waitFor({ timeout: 10000 });
  await page.fill('#email', 'browser@example.com');
  await page.click('#place-order');
  await page.waitForFunction(() => document.getElementById('availability').textContent !== '' ||
    document.getElementById('error').textContent !== '', null, { timeout: 15000 });
  const out = await page.evaluate(() => ({
    cartTotal: document.getElementById('cart-total').textContent,
    reference: document.getElementById('order-ref').textContent,
    status: document.getElementById('order-status').textContent,
    availability: document.getElementById('availability').textContent,
    error: document.getElementById('error').textContent,
    log: document.getElementById('log').textContent,
  }));
  out.consoleErrors = consoleErrors;
  console.log(JSON.stringify(out));
  if (out.error) code = 1;
} catch (e) {
  console.error(String(e));
  for (const p of browser.contexts().flatMap((c) => c.pages())) {
    console.error('page error:', await p.locator('#error').textContent().catch(() => '?'));
    console.error('page log:', await p.locator('#log').textContent().catch(() => '?'));
  }
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
