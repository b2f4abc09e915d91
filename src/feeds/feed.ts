// What the feed writers take (a site and its newest posts) and the entries they all write, with
// the same fallbacks in every format: a post without a title is titled by its slug, and one without
// an author is the feed's. No writer reads the clock, so one list of posts always makes the same
// bytes (and the same strong ETag).
import { linkBaseOf, resolveRelativeLinks } from './absolute-links.js'
import type { PostUrl } from './post-url.js'

export interface FeedPost {
  slug: string
  title?: string | null
  /** What readers show when they show no content: the `summary` column, or the start of the text (the computed `excerpt`). */
  summary?: string | null
  /** The rendered content (`C_html` of a Markdown column); relative links and images are resolved against the site's URL. */
  html?: string | null
  /** Plain text, used when there is no HTML (JSON Feed's `content_text`). */
  text?: string | null
  author?: string | null
  tags?: readonly string[] | null
  publishedAt?: Date | null
  updatedAt?: Date | null
}

export interface Feed {
  title: string
  description?: string
  /** A language tag (`en`, `fr-CA`). */
  language?: string
  /** The author of the posts that name none (Atom requires one for every entry). */
  author?: string
  /** The site's home page (`SITE_URL`), against which relative links in content resolve. */
  homeUrl: string
  /** This document's own URL, for its `self` link. */
  selfUrl?: string
  postUrl: PostUrl
  /** The posts, in the order the feed lists them (newest first). */
  posts: readonly FeedPost[]
}

export interface FeedEntry {
  url: string
  title: string
  summary?: string
  html?: string
  text?: string
  author?: string
  tags: string[]
  published?: Date
  /** When the post last changed: `updatedAt`, else `publishedAt` (none when it has neither). */
  updated?: Date
}

export interface FeedContents {
  /** The latest date of any post, or the Unix epoch when no post has one (never "now": see above). */
  updated: Date
  entries: FeedEntry[]
}

const EPOCH = new Date(0)

export function feedContents (feed: Feed): FeedContents {
  const dated = feed.posts.map((post) => validDate(post.updatedAt) ?? validDate(post.publishedAt))
  const updated = new Date(dated.reduce((latest, date) => Math.max(latest, date?.getTime() ?? latest), EPOCH.getTime()))
  const linkBase = linkBaseOf(feed.homeUrl)
  const entries = feed.posts.map((post, index): FeedEntry => {
    const url = feed.postUrl(post.slug)
    const html = nonBlank(post.html)
    return {
      url,
      title: nonBlank(post.title) ?? post.slug,
      summary: nonBlank(post.summary),
      html: html === undefined ? undefined : resolveRelativeLinks(html, linkBase, url),
      text: nonBlank(post.text),
      author: nonBlank(post.author) ?? nonBlank(feed.author),
      tags: (post.tags ?? []).filter((tag) => typeof tag === 'string' && tag.trim() !== ''),
      published: validDate(post.publishedAt),
      updated: dated[index]
    }
  })
  return { updated, entries }
}

function nonBlank (value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

function validDate (value: Date | null | undefined): Date | undefined {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined
}
