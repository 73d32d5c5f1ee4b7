// Drives the store settings API Keys page in headless Chromium as an administrator: sign in
// (login and an application password), create a key with a scope (its plaintext shown once, the
// copy button), roll it (a new plaintext shown once), revoke the new one. Environment: PAGE_URL,
// LOGIN, PASSWORD, CHROMIUM, SCREENSHOT (a path, optional). Prints one JSON line
// {created, rolled, afterReload, statuses, copied, error}; exits 1 on any failure.
import { chromium } from 'playwright-core';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(process.env.PAGE_URL).origin });
  const page = await context.newPage();
  await page.goto(process.env.PAGE_URL);
  await page.fill('#login', process.env.LOGIN);
  await page.fill('#password', process.env.PASSWORD);
  await page.click('#signin');
  await page.locator('#create, #error').first().waitFor({ timeout: 10000 });
  if (await page.locator('#error').count()) {
    throw new Error('refused: ' + (await page.locator('#error').textContent()));
  }
  await page.fill('#name', 'Warehouse <main>');
  await page.check('#scope-read_orders');
  await page.click('#create-key');
  await page.locator('#new-key').waitFor({ timeout: 10000 });
  const created = (await page.locator('#new-key').textContent()).trim();
  await page.click('#copy');
  await page.locator('#copied').filter({ hasText: /Copied|Select/ }).waitFor({ timeout: 5000 });
  const copied = (await page.locator('#copied').textContent()).trim();
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
  // Roll the key: a new plaintext, shown once.
  await page.locator('#keys tbody tr').filter({ hasText: 'Warehouse <main>' }).locator('button.roll').click();
  await page.locator('#new-key').waitFor({ timeout: 10000 });
  const rolled = (await page.locator('#new-key').textContent()).trim();
  // A reload shows no plaintext any more.
  await page.goto(process.env.PAGE_URL);
  const afterReload = await page.locator('#new-key').count();
  // Revoke the newest key (the rolled one is first: newest first).
  await page.locator('#keys tbody tr').first().locator('button.revoke').click();
  await page.locator('#keys').waitFor({ timeout: 10000 });
  const statuses = await page.locator('#keys tbody td.status').allTextContents();
  console.log(JSON.stringify({ created, rolled, afterReload, statuses, copied }));
} catch (e) {
  const body = await Promise.all(browser.contexts().flatMap((c) => c.pages()).map((p) => p.content().catch(() => '?')));
  console.log(JSON.stringify({ error: String(e), body: body.join('\n') }));
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
