// A front's change routes as their documentation describes them, faked on loopback (node:http)
// for the typed client's tests: `GET /api/changes` (every post and the head token; `?since=TOKEN`
// the posts added or changed and the slugs removed since; a forgotten token a 410 `sync-expired`
// problem; `fields` trims the posts) and the same route with `Accept: text/event-stream` (resumed
// from `Last-Event-ID` or `since`: the gap as one event, or a `sync-expired` event; without either,
// the head as an `id:` alone; then one event per commit). Tests commit, forget states, drop or
// silence the streams and make the next connections fail.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakePost { slug: string, [column: string]: unknown }

export interface StreamRequest { since: string | undefined, lastEventId: string | undefined }

export interface FakeChanges {
  url: string
  /** The posts of the head state, by slug. */
  head: () => ReadonlyMap<string, FakePost>
  headToken: () => string
  /** Makes a new state from the head (an edit that changes nothing still makes one); returns its token. */
  commit: (edit: (posts: Map<string, FakePost>) => void) => string
  /** Forgets every state but the head: older tokens get 410 or `sync-expired`. */
  forget: () => void
  /** The change stream's requests, in order. */
  readonly streamRequests: StreamRequest[]
  /** The JSON requests' query strings, in order. */
  readonly jsonQueries: string[]
  readonly openStreams: () => number
  /** Cuts every open stream (as a restart or a proxy would). */
  dropStreams: () => void
  /** The next stream requests are answered with these statuses (and headers), one each. */
  failStreams: (...answers: Array<{ status: number, headers?: Record<string, string> }>) => void
  /** Streams opened from now on send their headers, then nothing (not even heartbeats). */
  silence: (silent: boolean) => void
  close: () => Promise<void>
}

const problem = (kind: string, status: number, title: string, detail: string): string =>
  JSON.stringify({ type: `urn:blog-read-api:problem:${kind}`, title, status, detail })

export async function startFakeChanges (initial: FakePost[]): Promise<FakeChanges> {
  const states: Array<{ token: string, posts: Map<string, FakePost> }> = [{ token: 't0', posts: new Map(initial.map((post) => [post.slug, post])) }]
  let oldest = 0
  const streams = new Set<ServerResponse>()
  const streamRequests: StreamRequest[] = []
  const jsonQueries: string[] = []
  const failures: Array<{ status: number, headers?: Record<string, string> }> = []
  let silent = false
  const head = (): { token: string, posts: Map<string, FakePost> } => states.at(-1)!
  const known = (token: string): Map<string, FakePost> | undefined => states.slice(oldest).find((state) => state.token === token)?.posts

  function delta (from: ReadonlyMap<string, FakePost>, to: ReadonlyMap<string, FakePost>): { upserted: FakePost[], deleted: string[] } {
    const upserted = [...to.values()].filter((post) => JSON.stringify(from.get(post.slug)) !== JSON.stringify(post))
    const deleted = [...from.keys()].filter((slug) => !to.has(slug))
    return { upserted, deleted }
  }

  const changeEvent = (since: string, until: string, { upserted, deleted }: ReturnType<typeof delta>): string =>
    `id: ${until}\ndata: ${JSON.stringify({ since, until, upserted: upserted.map((post) => post.slug), deleted })}\n\n`

  function answerJson (url: URL, res: ServerResponse): void {
    jsonQueries.push(url.search)
    const since = url.searchParams.get('since') ?? undefined
    const fields = url.searchParams.get('fields')?.split(',')
    const trim = (post: FakePost): FakePost => fields === undefined ? post : Object.fromEntries(Object.entries(post).filter(([name]) => name === 'slug' || fields.includes(name))) as FakePost
    const { token, posts } = head()
    if (since === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ until: token, upserted: [...posts.values()].map(trim), deleted: [] }))
      return
    }
    const from = known(since)
    if (from === undefined) {
      res.writeHead(410, { 'content-type': 'application/problem+json' }).end(problem('sync-expired', 410, 'Sync token expired', 'Start again without since.'))
      return
    }
    const { upserted, deleted } = delta(from, posts)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ since, until: token, upserted: upserted.map(trim), deleted }))
  }

  function openStream (req: IncomingMessage, url: URL, res: ServerResponse): void {
    const lastEventId = typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : undefined
    const since = url.searchParams.get('since') ?? undefined
    streamRequests.push({ since, lastEventId })
    const failure = failures.shift()
    if (failure !== undefined) {
      res.writeHead(failure.status, { 'content-type': 'application/problem+json', ...failure.headers }).end(problem('upstream-unavailable', failure.status, 'Failed', 'As the test asked.'))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
    if (silent) {
      res.flushHeaders()
      return
    }
    const from = lastEventId ?? since
    const { token, posts } = head()
    const held = from === undefined ? undefined : known(from)
    if (from === undefined) res.write(`id: ${token}\n\n`)
    else if (held === undefined) res.write(`id: ${token}\nevent: sync-expired\ndata: ${problem('sync-expired', 410, 'Sync token expired', 'Sync again.')}\n\n`)
    else if (from !== token) res.write(changeEvent(from, token, delta(held, posts)))
    streams.add(res)
    res.once('close', () => streams.delete(res))
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake.invalid')
    if (url.pathname !== '/api/changes') {
      res.writeHead(404, { 'content-type': 'application/problem+json' }).end(problem('not-found', 404, 'Not found', 'No such route.'))
    } else if (/text\/event-stream/.test(req.headers.accept ?? '')) {
      openStream(req, url, res)
    } else {
      answerJson(url, res)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/`,
    head: () => head().posts,
    headToken: () => head().token,
    commit (edit) {
      const before = head()
      const posts = new Map([...before.posts].map(([slug, post]) => [slug, { ...post }]))
      edit(posts)
      const token = `t${states.length}`
      states.push({ token, posts })
      for (const stream of streams) stream.write(changeEvent(before.token, token, delta(before.posts, posts)))
      return token
    },
    forget: () => { oldest = states.length - 1 },
    streamRequests,
    jsonQueries,
    openStreams: () => streams.size,
    dropStreams: () => { for (const stream of streams) stream.destroy() },
    failStreams: (...answers) => { failures.push(...answers) },
    silence: (value) => { silent = value },
    close: async () => {
      for (const stream of streams) stream.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
