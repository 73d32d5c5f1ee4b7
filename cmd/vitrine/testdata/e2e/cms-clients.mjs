// Real WordPress REST clients against a running Vitrine edge: the npm `wpapi` client (1.2.2)
// discovers the API from the site URL, then lists, creates, updates and deletes posts through
// namespace('cms/v2') with an application password; `@wordpress/api-fetch` fetches every page of
// posts by following rel="next"; both read templates by their string ids (theme//slug). Environment: SITE_URL (the store's canonical base, answered by
// the edge), CMS_USER, CMS_PASSWORD. Prints one JSON line; exits 1 on any failure.
import WPAPI from 'wpapi';
import apiFetch from '@wordpress/api-fetch';

const site = process.env.SITE_URL;
const out = {};
try {
  const wp = await WPAPI.discover(site);
  wp.auth({ username: process.env.CMS_USER, password: process.env.CMS_PASSWORD });
  const cms = wp.namespace('cms/v2');
  const firstPage = await cms.posts().perPage(5).get();
  out.wpapiListed = firstPage.length;
  out.wpapiTotal = firstPage._paging && firstPage._paging.total;
  const created = await cms.posts().create({ title: 'From wpapi', content: '<p>Hello</p>', status: 'publish' });
  out.created = created.id;
  const updated = await cms.posts().id(created.id).update({ title: 'From wpapi, renamed' });
  out.updatedTitle = updated.title.raw ?? updated.title.rendered;
  const trashed = await cms.posts().id(created.id).delete();
  out.trashedStatus = trashed.status;
  const deleted = await cms.posts().id(created.id).delete({ force: true });
  out.deleted = deleted.deleted;

  // api-fetch, as the block editor uses it: a root URL middleware, then per_page=-1 follows
  // rel="next" until the last page.
  apiFetch.use(apiFetch.createRootURLMiddleware(site.replace(/\/$/, '') + '/index.php?rest_route=/'));
  const all = await apiFetch({ path: '/cms/v2/posts?per_page=-1' });
  out.apiFetchAll = all.length;
  out.apiFetchDistinct = new Set(all.map((p) => p.id)).size;

  // Templates by their string ids (theme//slug): the discovered route tree carries the
  // two-segment capture, so wpapi builds .templates().id(…) and ['template-parts']() (wpapi
  // camel-cases setters, not resource names).
  // Templates are not public: these reads carry the editor's application password.
  const creds = { username: process.env.CMS_USER, password: process.env.CMS_PASSWORD };
  const tpl = await cms.templates().auth(creds).id('vitrine-blocks//single').param('context', 'edit').get();
  out.templateID = tpl.id;
  out.templateSource = tpl.source;
  const headers = await cms['template-parts']().auth(creds).param('area', 'header').get();
  out.headerParts = headers.map((p) => p.id).join(',');
  const basic = 'Basic ' + Buffer.from(creds.username + ':' + creds.password).toString('base64');
  const home = await apiFetch({ path: '/cms/v2/templates/vitrine-blocks//home', headers: { Authorization: basic } });
  out.apiFetchTemplate = home.id;
} catch (e) {
  out.error = String(e && (e.stack || e.message || e));
  if (e && e.response) out.errorBody = JSON.stringify(e.response.body || e.response.text || '').slice(0, 500);
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
