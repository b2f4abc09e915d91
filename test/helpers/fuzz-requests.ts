// Generated whole requests for the edge's fuzz test: request lines, header sets and
// bodies, well-formed or hostile, each with the oracle of what a tier must answer, whether that
// answer closes the connection, and whether it may cost a call (upstream, or store read).
import fc from 'fast-check'
import type { ProblemKind } from '../../src/contract/problems.js'
import { EDGE_POSTS, MISSING_SLUG, type EdgeTier } from './edge-tiers.js'

export interface GeneratedRequest {
  bytes: string
  /** What it is, for failure messages and the tally of kinds. */
  label: string
  head: boolean
  /** The answer: a success status, or a problem kind. */
  expect: number | ProblemKind
  /** Its answer closes the connection: nothing after it is answered. */
  closes: boolean
  /** Its answer may come from work done for it (a 2xx or a 404 from the upstream or the store). */
  work: boolean
  /** An `X-Request-Id` the answer must echo. */
  requestId?: string
}

/** What the tier under test is, as the oracle needs it. */
export type TierShape = Pick<EdgeTier, 'name' | 'list' | 'item' | 'cors'>

/** Header fields that change nothing about the answer (but its encoding). */
const harmlessField = fc.oneof(
  fc.constantFrom('Accept: */*', 'Accept: application/json', 'User-Agent: fuzz/1.0', 'Cache-Control: no-cache', 'If-None-Match: "not-a-match"',
    'Accept-Encoding: gzip', 'Accept-Encoding: br;q=0, gzip;q=0, *', 'Accept-Encoding: gzip;q=0, *', 'Accept-Encoding: identity',
    'Cookie: a=b', 'Accept-Language: en', 'Upgrade: websocket', 'X-Not-Transfer-Encoding: chunked', 'TE: trailers'),
  fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/), fc.stringMatching(/^[\x21-\x7e]{0,40}$/), fc.constantFrom(': ', ':', ':   '))
    // Not the fields that decide anything here.
    .filter(([name]) => !/^(?:host|content-length|transfer-encoding|expect|connection|x-request-id|origin|access-control-request-method|upgrade|accept-encoding|if-.*|accept-version)$/i.test(name))
    .map(([name, value, separator]) => `${name}${separator}${value}`)
)

/** The Host line, in any case and spacing. */
const hostLine = fc.constantFrom('Host: t', 'host: t', 'HOST:t', 'Host:   127.0.0.1:3000', 'Host: [::1]:80', 'Host: example.com')

/** An `X-Request-Id`: one the tiers keep, or one they replace (`echo: false`). */
const requestIdField = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[\w.-]{1,20}$/).map((id) => ({ id, echo: true })) },
  { weight: 1, arbitrary: fc.constantFrom('a b', 'x'.repeat(129), '<script>', 'caf\u00e9').map((id) => ({ id, echo: false })) }
)

interface Shape {
  method: string
  target: string
  version: string
  /** Fields after Host (already joined lines, without CRLF). */
  fields: readonly string[]
  body: string
  host: boolean
}

function render ({ method, target, version, fields, body }: Shape, host: string, extra: string[], requestId: string | undefined): string {
  const lines = [host, ...extra, ...fields, ...(requestId === undefined ? [] : [`X-Request-Id: ${requestId}`])].filter((line) => line !== '')
  return `${method} ${target}${version === '' ? '' : ` ${version}`}\r\n${lines.map((line) => `${line}\r\n`).join('')}\r\n${body}`
}

type Outcome = Pick<GeneratedRequest, 'expect' | 'closes' | 'work' | 'label'> & {
  shape: Omit<Shape, 'host'> & { host?: boolean }
  /** Refused by Node's parser, or past the fields kept: the answer cannot carry the request's id. */
  unread?: true
}

const existing = fc.constantFrom(...EDGE_POSTS.map((post) => post.slug))
const GET_OR_HEAD = fc.constantFrom('GET', 'GET', 'HEAD')
const KNOWN_OTHER_METHODS = fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT', 'TRACE', 'COPY')

/** Every kind of request, with its oracle for `tier`. */
function outcomes (tier: TierShape): fc.Arbitrary<Outcome> {
  const route = fc.oneof(fc.constant(tier.list), existing.map(tier.item))
  const plain = (method: string, target: string, fields: readonly string[] = [], body = ''): Omit<Shape, 'host'> => ({ method, target, version: 'HTTP/1.1', fields, body })
  const bodyOf = fc.oneof(
    fc.stringMatching(/^[a-z]{1,20}$/).map((text) => ({ fields: [`Content-Length: ${text.length}`], body: text })),
    fc.stringMatching(/^[a-z]{1,20}$/).map((text) => ({ fields: ['Transfer-Encoding: chunked'], body: `${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n` })),
    fc.constant({ fields: ['Transfer-Encoding: xchunked'], body: 'hello' }),
    fc.constant({ fields: ['Content-Length: 007'], body: 'seven!!' })
  )
  const ok = (label: string, shape: Omit<Shape, 'host'>, expect: number | ProblemKind = 200, work = true): Outcome => ({ label, shape, expect, closes: false, work })
  const closing = (label: string, shape: Omit<Shape, 'host'> & { host?: boolean }, expect: number | ProblemKind, work = false): Outcome => ({ label, shape, expect, closes: true, work })
  const unread = (outcome: Outcome): Outcome => ({ ...outcome, unread: true })
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(GET_OR_HEAD, route).map(([method, target]) => ok('served', plain(method, target))) },
    { weight: 2, arbitrary: GET_OR_HEAD.map((method) => ok('missing post', plain(method, tier.item(MISSING_SLUG)), 'post-not-found')) },
    {
      weight: 1,
      // The front's slug rule; the post API looks up any slug without control characters.
      arbitrary: fc.constantFrom('Bad_Slug', 'UPPER', 'a--b').map((bad) => tier.name === 'front'
        ? ok('invalid slug', plain('GET', tier.item(bad)), 'invalid-slug', false)
        : ok('unknown slug', plain('GET', tier.item(bad)), 'post-not-found'))
    },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('GET', 'DELETE', 'PROPFIND'), fc.constantFrom('/nowhere', '/api', `${tier.list}/x/y`, '*')).map(([method, target]) => ok('unknown path', plain(method, target), 'not-found', false)) },
    { weight: 1, arbitrary: fc.constant(ok('malformed percent-encoding', plain('GET', tier.item('%zz')), 'bad-request', false)) },
    { weight: 1, arbitrary: route.map((target) => ok('absolute form', plain('GET', `http://evil.example${target}`))) },
    { weight: 3, arbitrary: fc.tuple(KNOWN_OTHER_METHODS, route).map(([method, target]) => ok(`${method}`, plain(method, target), 'method-not-allowed', false)) },
    { weight: 2, arbitrary: fc.tuple(KNOWN_OTHER_METHODS, route, bodyOf).map(([method, target, { fields, body }]) => closing(`${method} with a body`, plain(method, target, fields, body), 'method-not-allowed')) },
    { weight: 4, arbitrary: fc.tuple(GET_OR_HEAD, route, bodyOf).map(([method, target, { fields, body }]) => closing('GET with a body', plain(method, target, fields, body), 'body-not-allowed')) },
    { weight: 2, arbitrary: fc.tuple(route, fc.constantFrom('0', '00', '0000')).map(([target, zero]) => ok('Content-Length zero', plain('GET', target, [`Content-Length: ${zero}`]))) },
    { weight: 1, arbitrary: route.map((target) => ok('Expect: foo', plain('GET', target, ['Expect: foo']), 'expectation-failed', false)) },
    { weight: 1, arbitrary: route.map((target) => closing('Expect: foo with a body', plain('GET', target, ['Expect: foo', 'Content-Length: 2'], 'hi'), 'expectation-failed')) },
    { weight: 1, arbitrary: route.map((target) => closing('Expect: 100-continue', plain('GET', target, ['Expect: 100-continue']), 200, true)) },
    { weight: 1, arbitrary: route.map((target) => closing('Expect: 100-continue with a body', plain('GET', target, ['Expect: 100-continue', 'Content-Length: 2'], 'hi'), 'body-not-allowed')) },
    { weight: 1, arbitrary: fc.tuple(route, fc.integer({ min: 100, max: 400 })).map(([target, n]) => unread(closing('too many fields', plain('GET', target, Array.from({ length: n }, (_, i) => `X-F-${i}: v`)), 'headers-too-large'))) },
    { weight: 1, arbitrary: fc.tuple(route, fc.integer({ min: 16_400, max: 30_000 })).map(([target, n]) => unread(closing('head over 16 KiB', plain('GET', target, [`X-Big: ${'v'.repeat(n)}`]), 'headers-too-large'))) },
    { weight: 1, arbitrary: route.map((target) => closing('no Host', { ...plain('GET', target), host: false }, 'bad-request')) },
    { weight: 1, arbitrary: route.map((target) => closing('two Hosts', plain('GET', target, ['Host: other']), 'bad-request')) },
    { weight: 2, arbitrary: route.map((target) => closing('HTTP/1.0', { ...plain('GET', target), version: 'HTTP/1.0' }, 200, true)) },
    { weight: 1, arbitrary: route.map((target) => ok('HTTP/1.0 keep-alive', { ...plain('GET', target, ['Connection: keep-alive']), version: 'HTTP/1.0' })) },
    { weight: 2, arbitrary: route.map((target) => closing('Connection: close', plain('GET', target, ['Connection: close']), 200, true)) },
    // HTTP/2.0 and no version at all are parsed (the edge refuses them); the others are not.
    { weight: 1, arbitrary: route.map((target) => closing('HTTP/2.0', { ...plain('GET', target), version: 'HTTP/2.0' }, 'http-version-not-supported')) },
    { weight: 1, arbitrary: fc.tuple(route, fc.constantFrom('HTTP/1.2', 'HTTP/3.0', 'HTTP/9.9')).map(([target, version]) => unread(closing(version, { ...plain('GET', target), version }, 'http-version-not-supported'))) },
    { weight: 1, arbitrary: route.map((target) => closing('no version', { ...plain('GET', target), version: '' }, 'bad-request')) },
    { weight: 1, arbitrary: fc.tuple(route, fc.constantFrom('HTTP/1.x', 'HTTPS/1.1', 'http/1.1', 'HTTP/10.0')).map(([target, version]) => unread(closing(`version ${JSON.stringify(version)}`, { ...plain('GET', target), version }, 'bad-request'))) },
    { weight: 1, arbitrary: route.map((target) => unread(closing('unknown method', plain('FOO', target), 'method-not-allowed'))) },
    {
      weight: 3,
      arbitrary: fc.tuple(route, fc.constantFrom('Bad Header', 'X-Nul: a\u0000b', 'X-Cr: a\rb', 'Bad Name: v', ' folded: v', 'X-Bad\u0001: v', 'Content-Length: 1, 2', 'Content-Length: -1', 'Transfer-Encoding: chunked\r\nContent-Length: 3'))
        .map(([target, line]) => unread(closing(`malformed field ${JSON.stringify(line)}`, plain('GET', target, [line]), 'bad-request')))
    },
    {
      weight: 1,
      arbitrary: route.map((target) => tier.cors
        ? ok('preflight', plain('OPTIONS', target, ['Origin: https://reader.example', 'Access-Control-Request-Method: GET']), 204, false)
        : ok('preflight', plain('OPTIONS', target, ['Origin: https://reader.example', 'Access-Control-Request-Method: GET']), 'method-not-allowed', false))
    }
  )
}

/** One generated request for `tier`: an outcome dressed with harmless fields, a Host line, maybe an id. */
export function generatedRequest (tier: TierShape): fc.Arbitrary<GeneratedRequest> {
  return fc.tuple(outcomes(tier), hostLine, fc.array(harmlessField, { maxLength: 5 }), fc.option(requestIdField, { nil: undefined }))
    .map(([{ shape, unread, ...outcome }, host, extra, requestId]) => ({
      ...outcome,
      bytes: render({ host: true, ...shape }, shape.host === false ? '' : host, extra, requestId?.id),
      head: shape.method === 'HEAD',
      ...(requestId?.echo === true && unread !== true ? { requestId: requestId.id } : {})
    }))
}

/** The last request of every generated sequence: answered (and closing) unless something before it closed. */
export function sentinel (tier: TierShape): GeneratedRequest {
  return { label: 'sentinel', bytes: `GET ${tier.list} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`, head: false, expect: 200, closes: true, work: true }
}
