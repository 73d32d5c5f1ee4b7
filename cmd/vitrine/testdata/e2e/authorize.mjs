// Drives the application-password authorization page in headless Chromium, as a user whom an
// application sent there: the page asks to sign in (login and an existing application password),
// then to approve; approving redirects to the application's success_url with site_url,
// user_login and the new password. Environment: AUTHORIZE_URL (the page with app_name, app_id,
// success_url, reject_url), LOGIN, PASSWORD, ACTION (approve or reject; default approve),
// CHROMIUM. The success and reject URLs are answered in the browser (page.route), never fetched.
// Prints one JSON line {landed, appName, userLogin, error}; exits 1 on any failure.
import { chromium } from 'playwright-core';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  const page = await browser.newPage();
  let landed = '';
  // The application's own pages: record where the browser was sent.
  await page.route('https://client.example/**', (route) => {
    landed = route.request().url();
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="done">back in the application</p>' });
  });
  await page.goto(process.env.AUTHORIZE_URL);
  await page.fill('#login', process.env.LOGIN);
  await page.fill('#password', process.env.PASSWORD);
  await page.click('#signin');
  await page.locator('#approve').waitFor({ timeout: 10000 });
  const appName = await page.locator('#app-name').textContent();
  const userLogin = await page.locator('#user-login').textContent();
  await page.click(process.env.ACTION === 'reject' ? '#reject' : '#approve');
  await page.locator('#done').waitFor({ timeout: 10000 });
  console.log(JSON.stringify({ landed, appName, userLogin }));
} catch (e) {
  const body = await Promise.all(browser.contexts().flatMap((c) => c.pages()).map((p) => p.content().catch(() => '?')));
  console.log(JSON.stringify({ error: String(e), body: body.join('\n') }));
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
