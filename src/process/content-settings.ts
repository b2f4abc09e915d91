// The settings of what the front makes of the posts (rendered Markdown, feeds, the sitemap): a
// part of the one settings table (src/settings.ts), in the same form.
import { FRONT, POSTS, type Setting } from './setting-shape.js'
import { columnNames, count, siteUrl, text } from './setting-values.js'

export const CONTENT_SETTINGS = {
  MARKDOWN_COLUMNS: {
    value: 'COLUMNS',
    default: undefined,
    unset: '`content` when the table has it',
    help: 'post API: the Markdown columns, comma-separated, that formats=html,text renders and computed fields read (the first)',
    doc: 'Post API: the Markdown columns, comma-separated. `formats=html,text` adds `C_html` and `C_text` for each of them; the computed fields (`reading_time`, `word_count`, `excerpt`) read the first. A name the table lacks is skipped. See [Rendered content](api.md#rendered-content).',
    schema: columnNames.optional(),
    readBy: POSTS
  },
  SITE_URL: {
    value: 'URL',
    default: undefined,
    unset: 'the feeds and the sitemap answer 404',
    help: 'front: the public site\'s URL (http or https), which feeds and the sitemap link to; unset, they answer 404',
    doc: 'Front: the public site\'s absolute URL (http or https, no query or fragment). Feed and sitemap links are made from it, and relative links and images in feed content resolved against it (as a folder: `img.png` under `https://example.com/blog` is `https://example.com/blog/img.png`). Unset, `/feed.xml`, `/feed.atom`, `/feed.json` and `/sitemap.xml` answer 404 naming it. See [Feeds and sitemap](api.md#feeds-and-sitemap).',
    schema: siteUrl.optional(),
    readBy: FRONT
  },
  POST_URL_TEMPLATE: {
    value: 'TEMPLATE',
    default: '{site}/blog/{slug}',
    help: 'front: a post\'s public URL in feeds and the sitemap, from {site} (SITE_URL) and {slug}',
    doc: 'Front: a post\'s public URL in feeds and the sitemap: `{site}` is `SITE_URL` without its trailing slash, `{slug}` the slug (percent-encoded). It must make an absolute http or https URL; checked at start-up when `SITE_URL` is set.',
    schema: text,
    readBy: FRONT
  },
  FEED_SIZE: {
    value: 'N',
    default: '20',
    help: 'front: the newest posts each feed holds',
    schema: count(1, 1000),
    readBy: FRONT
  }
} as const satisfies Record<string, Setting>
