// JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/): `authors` arrays (1.1 replaced the
// single `author`), `language`, and for each item `id` (the post's URL, as Atom's), `url`, and
// `content_html` or, for a post without HTML, `content_text` (every item must have one of them).
import { feedContents, type Feed, type FeedEntry } from './feed.js'

export const JSON_FEED_CONTENT_TYPE = 'application/feed+json; charset=utf-8'
export const JSON_FEED_VERSION = 'https://jsonfeed.org/version/1.1'

export function writeJsonFeed (feed: Feed): string {
  const { entries } = feedContents(feed)
  return JSON.stringify({
    version: JSON_FEED_VERSION,
    title: feed.title,
    home_page_url: feed.homeUrl,
    feed_url: feed.selfUrl,
    description: feed.description,
    language: feed.language,
    authors: feed.author === undefined ? undefined : [{ name: feed.author }],
    items: entries.map(jsonItem)
  }) + '\n'
}

function jsonItem (entry: FeedEntry): object {
  return {
    id: entry.url,
    url: entry.url,
    title: entry.title,
    ...(entry.html === undefined ? { content_text: entry.text ?? entry.summary ?? '' } : { content_html: entry.html }),
    summary: entry.summary,
    date_published: entry.published?.toISOString(),
    date_modified: entry.updated?.toISOString(),
    authors: entry.author === undefined ? undefined : [{ name: entry.author }],
    tags: entry.tags.length === 0 ? undefined : entry.tags
  }
}
