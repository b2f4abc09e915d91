// The post API's bodies, serialised once per store change. Each request first reads the store's
// change token (after it arrived), then serves what was built under that same token or builds
// it, reading the data after the token: so no answer is older than its request, and a committed
// change shows in the very next response. Stores without a token are read afresh every time.
import { randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import { LRUCache } from 'lru-cache'
import { LIST_BUFFER_LIMIT } from '../body-limits.js'
import { createCoalescer } from '../coalescer.js'
import { createRepresentation, type Representation } from '../representation.js'
import { resumedStream } from '../resumed-stream.js'
import type { Post, PostStore } from '../store/store.js'

/** Posts kept per change token; a change drops them all. */
const MAX_CACHED_POSTS = 10_000
/** Streamed lists are written in chunks of about this size. */
const STREAM_CHUNK_CHARS = 16 * 1024

export type ListBody =
  | { kind: 'whole', representation: Representation }
  /** Too large to hold: stream it. `etag` is set when a change token identifies the content. */
  | { kind: 'large', etag: string | undefined }

interface Generation {
  token: string
  list?: Promise<ListBody>
  posts: LRUCache<string, Promise<Representation | null>>
}

// Change tokens are only meaningful within one process's connection (SQLite's data_version
// restarts), so tags derived from them carry this process's nonce.
const PROCESS_NONCE = randomBytes(6).toString('base64url')

export interface PostBodies {
  post: (slug: string) => Promise<Representation | null>
  list: () => Promise<ListBody>
  /** The list as a stream; rejects (before any byte is sent) when the store fails to start it. */
  streamList: () => Promise<Readable>
}

/** Told of each body a request gets: `built` for it from the store, or reused (src/ops/store-metrics.ts). */
export type BodyObserver = (kind: 'post' | 'list', built: boolean) => void

export function createPostBodies (store: PostStore, listBufferLimit = LIST_BUFFER_LIMIT, onBody?: BodyObserver): PostBodies {
  let current: Generation | undefined
  // Concurrent requests share one token read that started after they arrived: on PostgreSQL
  // this turns a query per request into a query per round trip, freshness unchanged.
  const tokenReads = createCoalescer<string | undefined>()
  const readChangeToken = (): Promise<string | undefined> => tokenReads.run('token', () => store.readChangeToken())

  function generationFor (token: string): Generation {
    if (current?.token !== token) current = { token, posts: new LRUCache({ max: MAX_CACHED_POSTS }) }
    return current
  }

  async function buildPost (slug: string): Promise<Representation | null> {
    const post = await store.findPostBySlug(slug)
    return post === undefined ? null : createRepresentation(Buffer.from(JSON.stringify(post)))
  }

  async function buildList (token: string | undefined): Promise<ListBody> {
    const parts: string[] = []
    let size = 2
    for await (const post of store.streamPosts()) {
      const json = JSON.stringify(post)
      size += json.length + 1
      // Leaving the loop closes the cursor; the caller streams the list afresh.
      if (size > listBufferLimit) return { kind: 'large', etag: token === undefined ? undefined : `"L-${PROCESS_NONCE}-${token}"` }
      parts.push(json)
    }
    return { kind: 'whole', representation: createRepresentation(Buffer.from(`[${parts.join(',')}]`)) }
  }

  /** Shares one build per token among concurrent requests; a failed build is not kept. */
  function shared<T> (promise: Promise<T>, forget: () => void): Promise<T> {
    promise.catch(forget)
    return promise
  }

  return {
    async post (slug) {
      const token = await readChangeToken()
      const generation = token === undefined ? undefined : generationFor(token)
      let body = generation?.posts.get(slug)
      onBody?.('post', body === undefined)
      if (generation === undefined) return await buildPost(slug)
      if (body === undefined) {
        body = shared(buildPost(slug), () => generation.posts.delete(slug))
        generation.posts.set(slug, body)
      }
      return await body
    },

    async list () {
      const token = await readChangeToken()
      const generation = token === undefined ? undefined : generationFor(token)
      onBody?.('list', generation?.list === undefined)
      if (generation === undefined) return await buildList(undefined)
      generation.list ??= shared(buildList(token), () => { generation.list = undefined })
      return await generation.list
    },

    async streamList () {
      const chunks = serialise(store.streamPosts())[Symbol.asyncIterator]()
      // The first chunk runs the query: a store failure is still a clean 503 here.
      const first = await chunks.next()
      return resumedStream(first.done === true ? [] : [first.value], chunks)
    }
  }
}

async function * serialise (posts: AsyncIterable<Post>): AsyncIterable<string> {
  let chunk = '['
  let separator = ''
  for await (const post of posts) {
    chunk += separator + JSON.stringify(post)
    separator = ','
    if (chunk.length >= STREAM_CHUNK_CHARS) {
      yield chunk
      chunk = ''
      // A fast reader (loopback) could otherwise drain a cursor that answers at once (SQLite)
      // without ever giving the event loop back: other requests would wait for the whole list.
      await new Promise(setImmediate)
    }
  }
  yield `${chunk}]`
}
