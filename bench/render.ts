// Costs of rendering and of feed and sitemap writing, measured in-process (no HTTP):
// - a typical post (the benchmark dataset's, about 600 words of Markdown) rendered afresh, and
//   served from the render cache (the SHA-256 of its source and a lookup);
// - RSS, Atom and JSON Feed for 20 such posts;
// - a sitemap of 100,000 posts, streamed (chunks counted, never joined), with the heap it adds.
// Each figure is the median of ROUNDS rounds, in wall-clock and CPU time (the CPU figure is the
// steadier one on a shared machine).
//   node --expose-gc --import tsx bench/render.ts [--rounds 7] [--posts 100000]
import { parseArgs } from 'node:util'
import MarkdownIt from 'markdown-it'
import { writeAtom } from '../src/feeds/atom.js'
import { feedPostFromRow } from '../src/feeds/feed-post.js'
import { writeJsonFeed } from '../src/feeds/json-feed.js'
import { createPostUrl, parseSiteUrl } from '../src/feeds/post-url.js'
import { writeRss } from '../src/feeds/rss.js'
import { sitemapDocument, type SitemapEntry } from '../src/feeds/sitemap.js'
import { excerpt } from '../src/render/computed-fields.js'
import { createMarkdownRenderer } from '../src/render/markdown-renderer.js'
import { createRenderCache } from '../src/render/render-cache.js'
import { generatePost } from './dataset.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, posts: { type: 'string', default: '100000' } } })
const ROUNDS = Number(values.rounds)
const SITEMAP_POSTS = Number(values.posts)

interface Timing { wallUs: number, cpuUs: number }

/** Median per-operation wall and CPU time of `op` run `times` times, over ROUNDS rounds. */
function measure (times: number, op: (index: number) => void): Timing {
  const rounds: Timing[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    for (let index = 0; index < times; index++) op(index)
    const wall = Number(process.hrtime.bigint() - start) / 1000
    const used = process.cpuUsage(cpu)
    rounds.push({ wallUs: wall / times, cpuUs: (used.user + used.system) / times })
  }
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  return { wallUs: median(rounds.map((r) => r.wallUs)), cpuUs: median(rounds.map((r) => r.cpuUs)) }
}

const show = (label: string, { wallUs, cpuUs }: Timing): void => {
  const unit = (us: number): string => us >= 10_000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(1)} µs`
  console.log(`${label.padEnd(44)} wall ${unit(wallUs).padStart(10)}   cpu ${unit(cpuUs).padStart(10)}`)
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const render = createMarkdownRenderer()
// The dataset's posts are about 500 words; each is lengthened with the next one's paragraphs to
// about 600 words, the length the search target names.
const posts = Array.from({ length: 200 }, (_, index) => {
  const post = generatePost(index)
  const more = generatePost(index + 200).content.split('\n\n').filter((block) => !block.startsWith('#'))
  let content = post.content
  while (render(content).wordCount < 600 && more.length > 0) content += `\n\n${more.shift()!}`
  return { ...post, content }
})
const sample = render(posts[0]!.content)
console.log(`typical post: ${posts[0]!.content.length} bytes of Markdown, ${sample.wordCount} words, ${sample.html.length} bytes of HTML`)
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') console.log('(run with --expose-gc for the sitemap heap figure)')

// Fresh renders: a different post each time (200 of them), so no engine cache helps. The baseline
// is markdown-it alone with the same options, HTML only: the ratio is what our rules and the
// plain-text walk and word count add.
const plain = new MarkdownIt('default', { html: false, linkify: true })
const baseline = measure(200, (index) => plain.render(posts[index % 200]!.content))
show('baseline: markdown-it alone, HTML only', baseline)
const fresh = measure(200, (index) => render(posts[index % 200]!.content))
show('render a typical post (no cache)', fresh)
console.log(`  ratio to the baseline: ${(fresh.cpuUs / baseline.cpuUs).toFixed(2)} (CPU)`)
const cache = createRenderCache({ render, maxEntries: 1000, maxBytes: 64 << 20 })
for (const post of posts) cache.render(post.content)
show('render a typical post (cache hit)', measure(2000, (index) => cache.render(posts[index % 200]!.content)))
show('excerpt (a cache hit included)', measure(2000, (index) => excerpt(cache.render(posts[index % 200]!.content).text)))

const postUrl = createPostUrl(parseSiteUrl('https://blog.example/'))
const feedPosts = posts.slice(0, 20).map((post) => {
  const rendered = cache.render(post.content)
  return feedPostFromRow({ ...post, tags: JSON.parse(post.tags), content_html: rendered.html, content_text: rendered.text, excerpt: excerpt(rendered.text, post.summary) })
})
const feed = { title: 'Bench blog', description: 'Bench', homeUrl: 'https://blog.example/', selfUrl: 'https://blog.example/feed.xml', postUrl, posts: feedPosts }
show('RSS 2.0, 20 posts', measure(50, () => writeRss(feed)))
show('Atom 1.0, 20 posts', measure(50, () => writeAtom(feed)))
show('JSON Feed 1.1, 20 posts', measure(50, () => writeJsonFeed(feed)))
console.log(`feed sizes: RSS ${writeRss(feed).length} B, Atom ${writeAtom(feed).length} B, JSON ${writeJsonFeed(feed).length} B`)

const entries: SitemapEntry[] = Array.from({ length: SITEMAP_POSTS }, (_, index) => ({
  slug: `a-post-slug-of-typical-length-${index}`,
  updatedAt: new Date(Date.UTC(2024, 0, 1) + index * 60_000),
  publishedAt: new Date(Date.UTC(2023, 0, 1) + index * 60_000)
}))
const sitemapOptions = { postUrl, pageUrl: (page: number) => `https://blog.example/sitemap.xml?page=${page}` }
let bytes = 0
let chunks = 0
const streamAll = (page?: number): void => {
  for (const chunk of sitemapDocument(entries, sitemapOptions, page) ?? []) { bytes += chunk.length; chunks++ }
}
const pages = Math.ceil(SITEMAP_POSTS / 50_000)
show(`sitemap, ${SITEMAP_POSTS} posts (index and ${pages} pages)`, measure(1, () => { for (let page = 0; page <= pages; page++) streamAll(page === 0 ? undefined : page) }))
console.log(`sitemap: ${(bytes / ROUNDS / 1e6).toFixed(1)} MB in ${chunks / ROUNDS} chunks per round`)

// The heap that stays alive while a 100,000-URL urlset streams: measured after a collection at
// each chunk, so garbage already written out does not count.
gc()
const before = process.memoryUsage().heapUsed
let peak = before
for (const chunk of sitemapDocument(entries, { ...sitemapOptions, pageSize: SITEMAP_POSTS })!) {
  bytes += chunk.length
  gc()
  peak = Math.max(peak, process.memoryUsage().heapUsed)
}
console.log(`sitemap of ${SITEMAP_POSTS} URLs in one urlset, streamed: live heap grows at most ${((peak - before) / 1e6).toFixed(2)} MB while writing ` +
  `(the heap holding the entries themselves: ${(before / 1e6).toFixed(0)} MB)`)
