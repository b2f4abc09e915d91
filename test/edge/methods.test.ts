// Methods at the edge, over raw sockets on both tiers: GET and HEAD are served; any other method,
// extension methods and CONNECT included, is a 405 problem with `Allow` on a route and a 404 on
// an unknown path; a method that is not a token is a 400; OPTIONS is a CORS preflight where CORS
// is on, and a problem otherwise.
import assert from 'node:assert/strict'
import { closing, describeCases, request, slug, type Case, type Expected } from './edge-case.js'

const CASES: Case[] = [
  {
    name: 'extension methods on both routes: 405 with Allow; on an unknown path: 404',
    bytes: (t) => ['PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT', 'TRACE', 'UNLOCK']
      .flatMap((method) => [request(method, t.list), request(method, t.item(slug(1)))]).join('') + request('PROPFIND', '/nowhere') + closing(t),
    expect: () => [...Array.from({ length: 16 }, (): Expected => 'method-not-allowed'), 'not-found', 200],
    calls: 1
  },
  {
    name: 'an extension method the parser does not know: 405 with Allow (the parser stops there)',
    bytes: (t) => request('FOO', t.list),
    expect: () => ['method-not-allowed'],
    calls: 0
  },
  {
    name: 'a method that is not a token: 400',
    bytes: (t) => request('G{T', t.list),
    expect: () => ['bad-request'],
    calls: 0
  },
  {
    name: 'CONNECT: 405 with Allow',
    bytes: () => request('CONNECT', 'evil.example:443'),
    expect: () => ['method-not-allowed'],
    calls: 0
  },
  {
    name: 'OPTIONS without Origin, without Access-Control-Request-Method, and OPTIONS *: problems',
    bytes: (t) => request('OPTIONS', t.list) + request('OPTIONS', t.item(slug(1)), 'Origin: https://reader.example\r\n') + request('OPTIONS', '*') + closing(t),
    expect: () => ['method-not-allowed', 'method-not-allowed', 'not-found', 200],
    calls: 1
  },
  {
    name: 'a CORS preflight: 204 on the front, 405 on the post API',
    bytes: (t) => request('OPTIONS', t.item(slug(1)), 'Origin: https://reader.example\r\nAccess-Control-Request-Method: GET\r\n') + closing(t),
    expect: (t) => [t.cors ? 204 : 'method-not-allowed', 200],
    calls: 1,
    check: ([preflight], t) => {
      if (t.cors) assert.equal(preflight?.headers['access-control-allow-methods'], 'GET, HEAD')
    }
  }
]

describeCases(CASES)
