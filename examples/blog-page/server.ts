// Serves the example page on its own origin (another port than the API's), with the built client
// (the modules of packages/client/dist/) under /client/. `npm run example` runs it; the browser test
// starts it on port 0. The page's CSP lets it call only the API named by its `?api=` parameter.
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url))

const FILES: Record<string, { file: string, type: string }> = {
  '/': { file: here('index.html'), type: 'text/html; charset=utf-8' },
  '/page.js': { file: here('page.js'), type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: here('style.css'), type: 'text/css; charset=utf-8' }
}

/** A module of the built client, `/client/NAME.js`. */
function clientFile (pathname: string): { file: string, type: string } | undefined {
  const name = /^\/client\/([a-z-]+\.js)$/.exec(pathname)?.[1]
  return name === undefined ? undefined : { file: here(`../../packages/client/dist/${name}`), type: 'text/javascript; charset=utf-8' }
}

export const DEFAULT_API = 'http://127.0.0.1:3000'

/** The origin of the page's `?api=` (an http or https URL), or of DEFAULT_API. */
function apiOrigin (search: URLSearchParams): string {
  try {
    const api = new URL(search.get('api') ?? DEFAULT_API)
    if (api.protocol === 'http:' || api.protocol === 'https:') return api.origin
  } catch {
    // Not a URL: the default below, which the page will not match, so its calls are refused.
  }
  return new URL(DEFAULT_API).origin
}

export interface ExampleServer {
  url: string
  close: () => Promise<void>
}

export async function startExampleServer ({ host = '127.0.0.1', port = 0 }: { host?: string, port?: number } = {}): Promise<ExampleServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://example.invalid')
    const entry = FILES[url.pathname] ?? clientFile(url.pathname)
    if (entry === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    let body: Buffer
    try {
      body = readFileSync(entry.file)
    } catch {
      // A client module the build did not make is a 404; the client missing altogether asks for a build.
      const built = entry.file.includes('/packages/client/dist/') && existsSync(here('../../packages/client/dist/index.js'))
      if (built) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      else res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('run `npm run build` first: packages/client/dist/index.js is missing\n')
      return
    }
    res.writeHead(200, {
      'content-type': entry.type,
      'content-length': body.length,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${apiOrigin(url.searchParams)}; base-uri 'none'; form-action 'none'`
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  const address = server.address() as AddressInfo
  return {
    url: `http://${host}:${address.port}/`,
    close: async () => await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { url, close } = await startExampleServer({ port: Number(process.env.EXAMPLE_PORT ?? 8080) })
  console.log(`example page: ${url}?api=${encodeURIComponent(process.env.API ?? DEFAULT_API)}  (the API must allow this origin: CORS_ORIGIN, default '*')`)
  // SIGINT/SIGTERM (Ctrl-C, or `npm run example` signalled): stop listening (idle keep-alive
  // connections are closed with the server), then end.
  const stop = (): void => { close().catch((err: unknown) => { console.error(err) }) }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
