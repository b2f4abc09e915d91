// The post API's bodies, serialised once per store change. Each request first reads the store's
// change token (after it arrived), then serves what was built under that same token or builds
// it, reading the data after the token: so no answer is older than its request, and a committed
// change shows in the very next response. Stores without a token are read afresh every time.
// Each answer comes with the version it was read under (src/contract/posts-version.ts).
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { LIST_BUFFER_LIMIT } from '../contract/body-limits.js'
import { createCoalescer } from '../lib/coalescer.js'
import { canonicalSearch, type ListQuery, type PostQuery } from '../contract/list-query.js'
import { encodeCursor, type SortKey } from '../contract/cursor.js'
import { createRepresentation, etagOf, heldSizeOf, type Representation } from '../http/representation.js'
import { resumedStream } from '../lib/resumed-stream.js'
import { textInChunks } from '../lib/text-chunks.js'
import type { ListShape } from '../contract/keyed-list.js'
import { StoreQueryError, type KeyedPost, type Post, type PostStore } from '../store/store.js'
import { createBuildCache, type BuildCache } from '../lib/build-cache.js'
import type { ConcurrencyGate } from '../lib/concurrency-gate.js'
import { createListCounts } from './list-counts.js'
import { createTagBodies } from './tag-bodies.js'
import { neighbourLink, POST_ROUTE } from '../contract/neighbours.js'
import { readNeighbourIndex, type NeighbourIndex } from './neighbour-index.js'
import { searchRepresentation, type SearchPages } from './search-pages.js'

/** Posts kept per change token (each distinct `fields` is one more); a change drops them all. */
const MAX_CACHED_POSTS = 10_000
/** Lists and pages kept per change token: every distinct query is one, so a flood of them evicts the oldest. */
const MAX_CACHED_LISTS = 1000
/** Bytes of bodies each of the two caches keeps at most (a whole list is up to LIST_BUFFER_LIMIT). */
const MAX_CACHED_BYTES = 64 * 1024 * 1024
/**
 * A keyed list is written in larger chunks than other streams: it is what relieves a post API
 * flooded with page calls (once the front holds it, they stop), so it must not wait a turn of
 * that flood every few rows: 100,000 posts in 16 KiB chunks took over 10 s under such load.
 * 256 KiB is a few milliseconds of rows per turn.
 */
const KEYED_CHUNK_CHARS = 256 * 1024

/** `total`: with `count=exact`, how many posts the filter keeps (X-Total-Count); the ETag covers it. */
export type ListBody =
  /** `next`: a page's last sort key, when more posts follow it. */
  | { kind: 'whole', representation: Representation, next?: SortKey, total?: number }
  /** Too large to hold: stream it. `etag` is set when a change token identifies the content. */
  | { kind: 'large', etag: string | undefined, total?: number }

/** A post, and the Link header to its neighbours (src/contract/neighbours.ts), which its ETag covers. */
export interface PostBody {
  representation: Representation
  link?: string
}

interface Generation {
  /** The store's change token, which is also the version the front sees. */
  token: string
  lists: BuildCache<ListBody>
  posts: BuildCache<PostBody | null>
  /** The default list's slugs, read at the first detail answer of this version. */
  neighbours?: Promise<NeighbourIndex>
}

/** A body, and the version it was read under (undefined: the store cannot tell). */
export interface Versioned<T> {
  body: T
  version: string | undefined
}

export interface PostBodies {
  /** Rejects with StoreQueryError, before reading anything, when the table cannot answer `query`. The body is null when no post has `slug`. */
  post: (slug: string, query?: PostQuery) => Promise<Versioned<PostBody | null>>
  list: (query?: ListQuery) => Promise<Versioned<ListBody>>
  /** Every tag with its number of posts (src/contract/tag-counts.ts). */
  tags: () => Promise<Versioned<Representation>>
  /** The version now: read after this call. Undefined: the store cannot tell. */
  version: () => Promise<string | undefined>
  /** The list as a stream; rejects (before any byte is sent) when the store fails to start it. */
  streamList: (query?: ListQuery) => Promise<Readable>
  /** The keyed list of `shape` (src/contract/keyed-list.ts), streamed. */
  streamKeyed: (shape: ListShape) => Promise<Readable>
  /** Bodies kept for the current change token, and builds in flight. */
  readonly cached: number
}

const sizeOfPost = (post: PostBody | null): number => post === null ? 64 : heldSizeOf(post.representation) + (post.link?.length ?? 0)
const sizeOfList = (list: ListBody): number => list.kind === 'whole' ? heldSizeOf(list.representation) : 256
// Their compressed variants, made when a client first takes one, are counted then.
const postGrows = (post: PostBody | null, grown: () => void): void => { if (post !== null) post.representation.onGrown = grown }
const listGrows = (list: ListBody, grown: () => void): void => { if (list.kind === 'whole') list.representation.onGrown = grown }

/** Told of each body a request gets: `built` for it from the store, or reused (src/ops/store-metrics.ts). */
export type BodyObserver = (kind: 'post' | 'list', built: boolean) => void

/**
 * `gate`: what every store read that builds an answer (never the change-token read, never an
 * answer built already) takes a turn of (src/posts-api/store-gate.ts); undefined: no bound.
 * `search`: the answers of `q` (without it, `q` is refused).
 */
export function createPostBodies (store: PostStore, listBufferLimit = LIST_BUFFER_LIMIT, onBody?: BodyObserver, gate?: ConcurrencyGate, search?: SearchPages): PostBodies {
  const gated = async <T>(read: () => Promise<T>): Promise<T> => gate === undefined ? await read() : await gate.run(read)
  let current: Generation | undefined
  // Concurrent requests share one token read that started after they arrived: on PostgreSQL
  // this turns a query per request into a query per round trip, freshness unchanged.
  const tokenReads = createCoalescer<string | undefined>()
  const readChangeToken = (): Promise<string | undefined> => tokenReads.run('token', () => store.readChangeToken())
  const counts = createListCounts(async (filter) => await gated(() => store.countPosts(filter)))
  const tagBodies = createTagBodies(store, gated)

  function generationFor (token: string): Generation {
    if (current?.token !== token) {
      current = {
        token,
        lists: createBuildCache({ max: MAX_CACHED_LISTS, maxBytes: MAX_CACHED_BYTES, sizeOf: sizeOfList, grows: listGrows }),
        posts: createBuildCache({ max: MAX_CACHED_POSTS, maxBytes: MAX_CACHED_BYTES, sizeOf: sizeOfPost, grows: postGrows })
      }
    }
    return current
  }

  /** The neighbour index of `generation` (read once, again after a failed read), or a fresh one without a version. */
  async function neighbourIndex (generation: Generation | undefined): Promise<NeighbourIndex> {
    if (generation === undefined) return await readNeighbourIndex(store)
    generation.neighbours ??= readNeighbourIndex(store)
    const reading = generation.neighbours
    return await reading.catch((err: unknown) => {
      if (generation.neighbours === reading) delete generation.neighbours
      throw err
    })
  }

  async function buildPost (slug: string, query: PostQuery, generation: Generation | undefined): Promise<PostBody | null> {
    const post = await store.findPostBySlug(slug, query)
    if (post === undefined) return null
    const body = Buffer.from(JSON.stringify(post))
    // Without a version, no list of slugs outlives the answer: a few one-row reads instead of the whole list.
    const neighbours = generation === undefined && store.readNeighbours !== undefined
      ? await store.readNeighbours(slug)
      : (await neighbourIndex(generation)).neighboursOf(slug)
    const link = neighbourLink(POST_ROUTE, neighbours ?? {})
    // A neighbour that changes leaves the body as it was: the validator covers the links too.
    return link === undefined ? { representation: createRepresentation(body) } : { representation: createRepresentation(body, etagOf(body, `\n${link}`)), link }
  }

  async function buildList (query: ListQuery, token: string | undefined): Promise<ListBody> {
    const parts: string[] = []
    let size = 2
    for await (const posts of store.streamPosts(query)) {
      for (const post of posts) {
        const json = JSON.stringify(post)
        size += json.length + 1
        // Leaving the loop closes the cursor; the caller streams the list afresh.
        if (size > listBufferLimit) return { kind: 'large', etag: token === undefined ? undefined : largeListEtag(token, query) }
        parts.push(json)
      }
    }
    return { kind: 'whole', representation: createRepresentation(Buffer.from(`[${parts.join(',')}]`)) }
  }

  /** A page (at most 1,000 posts) is built whole, whatever its size. */
  async function buildPage (query: ListQuery & { limit: number }): Promise<ListBody> {
    const { posts, next } = await store.readPage(query)
    const body = Buffer.from(`[${posts.map((post) => JSON.stringify(post)).join(',')}]`)
    if (next === undefined) return { kind: 'whole', representation: createRepresentation(body) }
    // The Link header is part of what a validator vouches for: a post added after the last one
    // leaves the body as it was, but a `next` link appears.
    return { kind: 'whole', representation: createRepresentation(body, etagOf(body, `\n${encodeCursor(next)}`)), next }
  }

  return {
    async post (slug, query = {}) {
      store.checkQuery(query)
      const token = await readChangeToken()
      if (token === undefined) {
        onBody?.('post', true)
        return { body: await gated(() => buildPost(slug, query, undefined)), version: undefined }
      }
      let built = false
      const generation = generationFor(token)
      // A slug never holds a control character (the route refuses them): the key is unambiguous.
      const body = generation.posts.get(`${slug}\n${canonicalSearch(query)}`, () => {
        built = true
        return gated(() => buildPost(slug, query, generation))
      })
      onBody?.('post', built)
      return { body: await body, version: generation.token }
    },

    async list (query = {}) {
      store.checkQuery(query)
      const { limit } = query
      const token = await readChangeToken()
      const build = async (): Promise<ListBody> => {
        const { q } = query
        if (q !== undefined) {
          if (search === undefined) throw new StoreQueryError('The q parameter is not served here.')
          const page = await gated(() => search.build({ ...query, q }, token))
          const body: ListBody = { kind: 'whole', representation: searchRepresentation(page), next: page.next }
          return query.count === undefined ? body : withTotal(body, page.total)
        }
        const body = await gated(() => limit === undefined ? buildList(query, token) : buildPage({ ...query, limit }))
        return query.count === undefined ? body : withTotal(body, await counts.count(query, token))
      }
      if (token === undefined) {
        onBody?.('list', true)
        return { body: await build(), version: undefined }
      }
      let built = false
      const generation = generationFor(token)
      const body = generation.lists.get(canonicalSearch(query), () => {
        built = true
        return build()
      })
      onBody?.('list', built)
      return { body: await body, version: generation.token }
    },

    async version () {
      const token = await readChangeToken()
      return token === undefined ? undefined : generationFor(token).token
    },

    async tags () {
      const token = await readChangeToken()
      return { body: await tagBodies.body(token), version: token === undefined ? undefined : generationFor(token).token }
    },

    // A stream holds its turn until its first rows are read; then its pace is its client's (on
    // PostgreSQL and MySQL, on a connection of its own).
    async streamList (query = {}) {
      return await gated(() => streamed(serialise(store.streamPosts(query))))
    },

    async streamKeyed (shape) {
      return await gated(() => streamed(keyedLines(store.streamKeyedPosts(shape))))
    },

    get cached () {
      return current === undefined ? 0 : current.lists.size + current.posts.size
    }
  }
}

/** `body` with its total, which its validator covers. */
function withTotal (body: ListBody, total: number): ListBody {
  if (body.kind === 'large') return { ...body, total, etag: body.etag?.replace(/"$/, `-t${total}"`) }
  const { representation } = body
  return { ...body, total, representation: createRepresentation(representation.body, etagOf(Buffer.from(`${representation.etag}\ntotal ${total}`))) }
}

/** `text` as a stream whose first chunk is read: the query runs, so a store failure is still a clean 503. */
async function streamed (text: AsyncIterable<string>): Promise<Readable> {
  const chunks = text[Symbol.asyncIterator]()
  const first = await chunks.next()
  return resumedStream(first.done === true ? [] : [first.value], chunks)
}

/** A streamed list's validator: the change token, and the query. */
function largeListEtag (token: string, query: ListQuery): string {
  const search = canonicalSearch(query)
  const variant = search === '' ? '' : `-${createHash('sha1').update(search).digest('base64url').slice(0, 16)}`
  return `"L-${token}${variant}"`
}

/** A JSON array of `posts`, in chunks. */
function serialise (posts: AsyncIterable<readonly Post[]>): AsyncIterable<string> {
  return textInChunks(posts, { text: (post) => JSON.stringify(post), open: '[', separator: ',', close: ']' })
}

/** The keyed list (src/contract/keyed-list.ts): a line per post, after its cursor. */
function keyedLines (posts: AsyncIterable<readonly KeyedPost[]>): AsyncIterable<string> {
  return textInChunks(posts, { text: ({ key, post }) => `${encodeCursor(key)} ${JSON.stringify(post)}\n`, open: '', separator: '', close: '', chunkChars: KEYED_CHUNK_CHARS })
}
