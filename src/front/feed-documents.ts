// The documents of the front's feeds and sitemap, each made from a list the upstream cache
// fetched and confirmed for its request (so exactly fresh), and kept, per document and query,
// for as long as that list's ETag stays: a request the list did not change for costs no
// rewrite. A document's strong ETag is its bytes' hash.
import { LRUCache } from 'lru-cache'
import type { FeedSettings } from '../config.js'
import { canonicalSearch, parseListQuery, type ListQuery } from '../contract/list-query.js'
import { ATOM_CONTENT_TYPE, writeAtom } from '../feeds/atom.js'
import type { Feed } from '../feeds/feed.js'
import { feedPostFromRow } from '../feeds/feed-post.js'
import { JSON_FEED_CONTENT_TYPE, writeJsonFeed } from '../feeds/json-feed.js'
import { RSS_CONTENT_TYPE, writeRss } from '../feeds/rss.js'
import { excerpt } from '../render/computed-fields.js'
import { createRepresentation, type Representation } from '../http/representation.js'

export const FEED_PATHS = ['/feed.xml', '/feed.atom', '/feed.json'] as const
export type FeedPath = (typeof FEED_PATHS)[number]

const WRITERS: Record<FeedPath, { write: (feed: Feed) => string, contentType: string }> = {
  '/feed.xml': { write: writeRss, contentType: RSS_CONTENT_TYPE },
  '/feed.atom': { write: writeAtom, contentType: ATOM_CONTENT_TYPE },
  '/feed.json': { write: writeJsonFeed, contentType: JSON_FEED_CONTENT_TYPE }
}

/** Documents kept (each feed and tag is one, each sitemap page one). */
const MAX_DOCUMENTS = 256

/** The posts a document is made from: the list's ETag, and its rows, parsed only when asked (a kept document needs none). */
export interface ListRows {
  rows: () => Array<Record<string, unknown>>
  source: string
}

export type Site = NonNullable<FeedSettings['site']>

export interface FeedDocuments {
  /** The list the feed at `url` (one of FEED_PATHS and its query) is made from; throws the 400 of a malformed query. */
  feedQuery: (url: string) => ListQuery
  /** The feed at `path` of `query`'s posts on `site`. */
  feed: (site: Site, path: FeedPath, query: ListQuery, list: ListRows) => Representation
  /** The document kept for `key`, else made by `make` from the list tagged `source` (undefined: there is none). */
  documentFor: (key: string, source: string, make: () => string | Iterable<string> | undefined) => Representation | undefined
}

export function isFeedPath (path: string): path is FeedPath {
  return path in WRITERS
}

export function feedContentType (path: FeedPath): string {
  return WRITERS[path].contentType
}

export function createFeedDocuments (feedSize: number): FeedDocuments {
  const documents = new LRUCache<string, { source: string, representation: Representation }>({ max: MAX_DOCUMENTS })

  function documentFor (key: string, source: string, make: () => string | Iterable<string> | undefined): Representation | undefined {
    const kept = documents.get(key)
    if (kept?.source === source) return kept.representation
    const made = make()
    if (made === undefined) return undefined
    const representation = createRepresentation(Buffer.from(typeof made === 'string' ? made : [...made].join('')))
    documents.set(key, { source, representation })
    return representation
  }

  return {
    feedQuery (url) {
      const { tag } = parseListQuery(url)
      return { limit: feedSize, formats: ['html', 'text'], ...(tag === undefined ? {} : { tag }) }
    },
    feed (site, path, query, { rows, source }) {
      return documentFor(`${path}${canonicalSearch(query)}`, source, () => WRITERS[path].write({
        title: site.url.host,
        homeUrl: site.url.href,
        selfUrl: atSiteRoot(site, `${path}${canonicalSearch(query.tag === undefined ? {} : { tag: query.tag })}`),
        postUrl: site.postUrl,
        posts: rows().map((row) => feedPostFromRow(row, markdownColumnOf(row), excerpt))
      }))!
    },
    documentFor
  }
}

/**
 * The public URL of one of this front's documents (`/feed.xml?tag=sql`, `/sitemap-2.xml`): at the
 * root of SITE_URL's origin, which routes these paths to this front (docs/api.md, "Feeds and
 * sitemap"). Not the request's Host: a document is kept for every client, and the front may sit
 * behind the site under another name.
 */
export function atSiteRoot (site: Site, pathAndSearch: string): string {
  return new URL(pathAndSearch, site.url).href
}

/** The column whose `_html` the row carries (MARKDOWN_COLUMNS is the post API's setting): the first such. */
function markdownColumnOf (row: Readonly<Record<string, unknown>>): string | undefined {
  return Object.keys(row).find((name) => name.endsWith('_html') && name.slice(0, -5) in row)?.slice(0, -5)
}

/** The rows of a list's JSON body, parsed when asked. */
export function listRowsOf (body: Buffer, source: string): ListRows {
  return { rows: () => JSON.parse(body.toString('utf8')) as Array<Record<string, unknown>>, source }
}
