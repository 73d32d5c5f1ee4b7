// Real WordPress REST clients uploading media to a running Vitrine edge: the npm `wpapi` client
// (1.2.2) discovers the API from the site URL, uploads an image file with .media().file(…) under
// namespace('cms/v2') with an application password, and sets it as a new post's featured media;
// `@wordpress/api-fetch` reads the post back with _embed, as the block editor does. Environment:
// SITE_URL (the store's canonical base, answered by the edge), CMS_USER, CMS_PASSWORD, IMAGE (a
// JPEG file's path). Prints one JSON line; exits 1 on any failure.
import WPAPI from 'wpapi';
import apiFetch from '@wordpress/api-fetch';

const site = process.env.SITE_URL;
const out = {};
try {
  const wp = await WPAPI.discover(site);
  wp.auth({ username: process.env.CMS_USER, password: process.env.CMS_PASSWORD });
  const cms = wp.namespace('cms/v2');
  const media = await cms.media().file(process.env.IMAGE, 'harbour at dusk.jpg').create({ alt_text: 'The harbour at dusk' });
  out.mediaId = media.id;
  out.mediaTitle = media.title.raw ?? media.title.rendered;
  const post = await cms.posts().create({ title: 'Harbour notes', content: '<p>Evening light.</p>', status: 'publish', featured_media: media.id });
  out.postId = post.id;

  apiFetch.use(apiFetch.createRootURLMiddleware(site.replace(/\/$/, '') + '/index.php?rest_route=/'));
  apiFetch.use(apiFetch.createNonceMiddleware('')); // no cookie auth: anonymous reads, as a front end does
  const read = await apiFetch({ path: `/cms/v2/posts/${post.id}?_embed=wp:featuredmedia` });
  const fm = read._embedded && read._embedded['wp:featuredmedia'] && read._embedded['wp:featuredmedia'][0];
  out.featuredMedia = read.featured_media;
  out.embeddedId = fm && fm.id;
  out.embeddedAlt = fm && fm.alt_text;
  out.sourceURL = fm && fm.source_url;
  out.sizes = {};
  for (const [name, s] of Object.entries((fm && fm.media_details && fm.media_details.sizes) || {})) {
    out.sizes[name] = { url: s.source_url, width: s.width, height: s.height, mime: s.mime_type };
  }
} catch (e) {
  out.error = String(e && (e.stack || e.message || e));
  if (e && e.response) out.errorBody = JSON.stringify(e.response.body || e.response.text || '').slice(0, 500);
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
