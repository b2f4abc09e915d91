// The settings of what the tiers make of the posts (rendered Markdown, search, feeds, the
// sitemap): a part of the one settings table (src/settings.ts), in the same form.
import { z } from 'zod'
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
  SEARCH_COLUMNS: {
    value: 'COLUMNS',
    default: 'title,summary,content',
    help: 'post API and migrate: the columns q searches, comma-separated (those the table has); a title match ranks first, then summary, then the rest',
    doc: 'Post API and `migrate --search`: the text columns `q` searches, comma-separated, distinct; a name the table lacks is skipped. A match in `title` ranks above one in `summary`, which ranks above one in any other column. The store\'s index (`migrate --search`) is made for these columns: after changing them, drop it and run `migrate --search` again, or the post API searches its own in-memory index. See [Search](api.md#search).',
    schema: columnNames.refine((names) => new Set(names).size === names.length, 'expected distinct column names'),
    readBy: [...POSTS, 'migrate']
  },
  SEARCH_LANGUAGE: {
    value: 'LANGUAGE',
    default: 'english',
    help: 'post API and migrate: the stemming language of search (english), or simple for none',
    doc: 'Post API and `migrate --search`: the language whose word forms search folds together: `english` (Porter stems on SQLite and the in-memory index; PostgreSQL\'s English configuration, stop words included), or `simple` for none. On PostgreSQL any text search configuration name works. MariaDB and MySQL never stem. See [Search](api.md#search).',
    schema: z.string().regex(/^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$/, 'expected a text search configuration name such as english or simple'),
    readBy: [...POSTS, 'migrate']
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
