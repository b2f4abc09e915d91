// "The limit": one node:http process answering the front's routes with the service's
// bytes from memory: no framework, no upstream, no store. Every benchmark figure is a ratio to it.
// Besides the list and the posts, it answers the `page` and `sorted-page` scenarios' requests.
//   node --import tsx bench/baseline-server.ts --db bench/.data/posts-g1-n1000.db --port 4000
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { SECURITY_HEADERS } from '../src/http/app.js'
import { parseListQuery, type ListQuery } from '../src/contract/list-query.js'
import { encodeCursor } from '../src/contract/cursor.js'
import { etagOf } from '../src/http/representation.js'
import { createSlugValidator } from '../src/contract/slug.js'
import { PAGE_FIELDS, PAGE_SIZE, SORTED_PAGE_PATH } from './scenarios.js'

interface Entity {
  body: Buffer
  etag: string
}

/** What the `page` scenario needs, per post in list order: its PAGE_FIELDS as JSON, and its cursor. */
interface Pages {
  fragments: string[]
  cursors: string[]
  index: Map<string, number>
}

const isValidSlug = createSlugValidator()

// The service's constant headers and ETags, so both answer with about the same bytes.
const COMMON_HEADERS = SECURITY_HEADERS
const strongEtag = etagOf

/**
 * Reads the posts as the service serialises them on SQLite: every column in table order, columns
 * declared JSON parsed, list newest first then by slug (bytes). Each post's bytes are a slice of
 * the list body, so 100,000 posts are held once.
 */
function loadPosts (filename: string): { list: Entity | undefined, posts: Map<string, Entity>, pages: Pages, sortedPage: SortedPage | undefined } {
  const db = new Database(filename, { readonly: true, fileMustExist: true })
  try {
    const jsonColumns = (db.pragma('table_info(posts)') as Array<{ name: string, type: string }>)
      .filter((c) => c.type.toUpperCase().includes('JSON')).map((c) => c.name)
    const rows = db.prepare('SELECT * FROM posts ORDER BY published_at DESC, slug COLLATE BINARY').iterate() as Iterable<Record<string, unknown>>
    const parts: Buffer[] = [Buffer.from('[')]
    const slices: Array<{ slug: string, start: number, end: number }> = []
    const pages: Pages = { fragments: [], cursors: [], index: new Map() }
    const titled: Array<{ title: string, slug: string, body: Buffer }> = []
    let offset = 1
    for (const row of rows) {
      for (const column of jsonColumns) {
        if (typeof row[column] === 'string') row[column] = JSON.parse(row[column])
      }
      const body = Buffer.from(JSON.stringify(row))
      // The served columns in table order, as the service selects them.
      pages.index.set(String(row.slug), pages.fragments.length)
      pages.fragments.push(JSON.stringify(Object.fromEntries(Object.entries(row).filter(([name]) => (PAGE_FIELDS as readonly string[]).includes(name)))))
      pages.cursors.push(encodeCursor({ slug: String(row.slug), publishedAt: row.published_at as string | null }))
      if (slices.length > 0) {
        parts.push(Buffer.from(','))
        offset++
      }
      parts.push(body)
      titled.push({ title: String(row.title), slug: String(row.slug), body })
      slices.push({ slug: String(row.slug), start: offset, end: offset + body.length })
      offset += body.length
    }
    parts.push(Buffer.from(']'))
    const listBody = Buffer.concat(parts)
    const posts = new Map<string, Entity>()
    for (const { slug, start, end } of slices) {
      const body = listBody.subarray(start, end)
      posts.set(slug, { body, etag: strongEtag(body) })
    }
    return { list: slices.length === 0 ? undefined : { body: listBody, etag: strongEtag(listBody) }, posts, pages, sortedPage: sortedPageOf(titled) }
  } finally {
    db.close()
  }
}

/** The `sorted-page` request's answer: its body, and the cursor of its next link when more posts follow. */
interface SortedPage {
  body: Buffer
  next: string | undefined
}

/** The first page in title order: titles by code points (UTF-8 bytes), ties by slug, as every store orders them. */
function sortedPageOf (posts: Array<{ title: string, slug: string, body: Buffer }>): SortedPage | undefined {
  const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))
  posts.sort((a, b) => bytewise(a.title, b.title) || bytewise(a.slug, b.slug))
  const page = posts.slice(0, PAGE_SIZE)
  const last = page.at(-1)
  if (last === undefined) return undefined
  const body = Buffer.from(`[${page.map((post) => post.body.toString()).join(',')}]`)
  return { body, next: posts.length > PAGE_SIZE ? encodeCursor({ slug: last.slug, sort: 'title', value: last.title }) : undefined }
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2). */
function matches (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}

function send (res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body?: Buffer): void {
  res.writeHead(status, { ...COMMON_HEADERS, ...headers, ...(body === undefined ? {} : { 'content-length': body.length }) })
  res.end(body)
}

function sendEntity (req: IncomingMessage, res: ServerResponse, entity: Entity): void {
  if (matches(req.headers['if-none-match'], entity.etag)) return send(res, 304, { etag: entity.etag })
  send(res, 200, { 'content-type': 'application/json; charset=utf-8', etag: entity.etag }, entity.body)
}

function sendProblem (res: ServerResponse, status: number, kind: string, title: string, detail: string): void {
  const body = Buffer.from(JSON.stringify({ type: `urn:blog-read-api:problem:${kind}`, title, status, detail }))
  send(res, status, { 'content-type': 'application/problem+json', 'cache-control': 'no-store' }, body)
}

const PAGE_FIELDS_SORTED = [...PAGE_FIELDS].sort().join(',')

/** The `page` scenario's request only: a page of PAGE_FIELDS after a cursor (whose slug says where), with its next link. */
function sendPage (req: IncomingMessage, res: ServerResponse, pages: Pages): void {
  let query: ListQuery
  try {
    query = parseListQuery(req.url ?? '/')
  } catch {
    return sendProblem(res, 400, 'invalid-query', 'Invalid query', 'A parameter is malformed.')
  }
  const start = query.after === undefined ? 0 : (pages.index.get(query.after.slug) ?? -2) + 1
  if (query.limit === undefined || query.fields?.join(',') !== PAGE_FIELDS_SORTED || query.tag !== undefined || start < 0) {
    return sendProblem(res, 400, 'invalid-query', 'Invalid query', 'The baseline answers the page scenario only.')
  }
  const end = Math.min(start + query.limit, pages.fragments.length)
  if (end <= start) return sendProblem(res, 404, 'no-posts', 'No posts', 'There are no posts yet.')
  const body = Buffer.from(`[${pages.fragments.slice(start, end).join(',')}]`)
  const next = end < pages.fragments.length ? pages.cursors[end - 1] : undefined
  if (next === undefined) return sendEntity(req, res, { body, etag: strongEtag(body) })
  res.setHeader('link', `</api/blog?limit=${query.limit}&after=${next}&fields=${PAGE_FIELDS_SORTED}>; rel="next"`)
  sendEntity(req, res, { body, etag: strongEtag(Buffer.concat([body, Buffer.from(`\n${next}`)])) })
}

function sendSortedPage (req: IncomingMessage, res: ServerResponse, page: SortedPage | undefined): void {
  if (page === undefined) return sendProblem(res, 404, 'no-posts', 'No posts', 'There are no posts yet.')
  if (page.next === undefined) return sendEntity(req, res, { body: page.body, etag: strongEtag(page.body) })
  res.setHeader('link', `</api/blog?limit=${PAGE_SIZE}&after=${page.next}&sort=title>; rel="next"`)
  sendEntity(req, res, { body: page.body, etag: strongEtag(Buffer.concat([page.body, Buffer.from(`\n${page.next}`)])) })
}

function handle (req: IncomingMessage, res: ServerResponse, list: Entity | undefined, posts: Map<string, Entity>, pages: Pages, sortedPage: SortedPage | undefined): void {
  const url = req.url ?? '/'
  if (url === SORTED_PAGE_PATH) return sendSortedPage(req, res, sortedPage)
  const query = url.indexOf('?')
  const path = query === -1 ? url : url.slice(0, query)
  if (path === '/api/blog' && query !== -1) return sendPage(req, res, pages)
  if (path === '/api/blog') {
    if (list === undefined) return sendProblem(res, 404, 'no-posts', 'No posts', 'There are no posts yet.')
    return sendEntity(req, res, list)
  }
  if (!path.startsWith('/api/blog/') || path.indexOf('/', '/api/blog/'.length) !== -1) {
    return sendProblem(res, 404, 'not-found', 'Not found', 'There is nothing at this address.')
  }
  let slug: string
  try {
    slug = decodeURIComponent(path.slice('/api/blog/'.length))
  } catch {
    return sendProblem(res, 400, 'bad-request', 'Bad request', 'The path has malformed percent-encoding.')
  }
  if (!isValidSlug(slug)) {
    return sendProblem(res, 400, 'invalid-slug', 'Invalid slug',
      'A slug is 1 to 200 lower-case letters and digits in groups joined by single hyphens.')
  }
  const post = posts.get(slug)
  if (post === undefined) return sendProblem(res, 404, 'post-not-found', 'Post not found', `No post has the slug "${slug}".`)
  sendEntity(req, res, post)
}

const { values } = parseArgs({ options: { db: { type: 'string' }, port: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } } })
if (values.db === undefined || values.port === undefined) throw new Error('usage: baseline-server.ts --db <sqlite file> --port <port> [--host <host>]')
const { list, posts, pages, sortedPage } = loadPosts(values.db)
createServer((req, res) => handle(req, res, list, posts, pages, sortedPage)).listen(Number(values.port), values.host, () => {
  process.stdout.write(`baseline listening on http://${values.host}:${values.port} with ${posts.size} posts\n`)
})
process.once('SIGTERM', () => process.exit(0))
