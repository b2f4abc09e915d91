// Posts and a site for the feed tests: a full post, a hostile one, and one with nothing but a slug.
import type { Feed, FeedPost } from '../../src/feeds/feed.js'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'

export const SITE = 'https://blog.example/'
export const postUrl = createPostUrl(parseSiteUrl(SITE))

export const FULL: FeedPost = {
  slug: 'hello-world',
  title: 'Hello, world',
  summary: 'The first post.',
  html: '<h1 id="hello">Hello</h1>\n<p>See <a href="/about">about</a>, <a href="#hello">this heading</a>, ' +
    '<a href="https://other.example/x?a=1&amp;b=2">elsewhere</a> and <img src="images/a.png" alt="a"></p>\n',
  text: 'Hello\nSee about, this heading, elsewhere and a',
  author: 'Ada Lovelace',
  tags: ['intro', 'C++'],
  publishedAt: new Date('2024-05-01T10:00:00Z'),
  updatedAt: new Date('2024-05-03T08:30:00Z')
}

// Every character a feed must survive: markup, CDATA's end, quotes, characters XML 1.0 forbids
// (a control character, a lone surrogate, U+FFFF), and an emoji (a surrogate pair, which is fine).
export const HOSTILE_TEXT = 'Less < more & "quoted" \'single\' ]]> <![CDATA[ x ]]> \u0001\u000b\ud800\uffff 😀'
export const HOSTILE_TEXT_KEPT = 'Less < more & "quoted" \'single\' ]]> <![CDATA[ x ]]>  😀'

export const HOSTILE: FeedPost = {
  slug: 'hostile',
  title: HOSTILE_TEXT,
  summary: HOSTILE_TEXT,
  html: `<p>${HOSTILE_TEXT.replace('<', '&lt;')}</p>\n<pre><code>]]&gt;</code></pre>\n`,
  author: 'Tom & Jerry <tj@example.com>',
  tags: ['a<b', 'x&y', ']]>'],
  publishedAt: new Date('2024-04-01T00:00:00Z'),
  updatedAt: null
}

export const BARE: FeedPost = { slug: 'bare', text: 'Only some text.' }

export function feedOf (posts: readonly FeedPost[], extra: Partial<Feed> = {}): Feed {
  return {
    title: 'Example blog',
    description: 'Posts about examples',
    language: 'en',
    homeUrl: SITE,
    postUrl,
    posts,
    ...extra
  }
}

/** FULL's HTML as every feed must carry it: each relative link resolved against the site's URL, not the post's. */
export const FULL_HTML_ABSOLUTE = '<h1 id="hello">Hello</h1>\n<p>See <a href="https://blog.example/about">about</a>, ' +
  '<a href="https://blog.example/blog/hello-world#hello">this heading</a>, <a href="https://other.example/x?a=1&amp;b=2">elsewhere</a> ' +
  'and <img src="https://blog.example/images/a.png" alt="a"></p>\n'
