// The limits of a request's head, as docs/api.md ("Errors", 431) states them, over raw sockets on
// both tiers: at most 100 header fields and 16 KiB of request line and header fields as written,
// whatever shape the bytes take; what Node's parser skips counts toward neither; a long pipeline
// is answered, not refused.
import { closing, describeCases, fields, HOST, request, slug, type Case, type Expected } from './edge-case.js'

const CASES: Case[] = [
  {
    name: '15,000 empty-valued header fields (60 KB): 431',
    bytes: (t) => `GET ${t.list} HTTP/1.1\r\n${HOST}${'a:\r\n'.repeat(15_000)}\r\n`,
    expect: () => ['headers-too-large'],
    calls: 0
  },
  {
    name: '101 header fields: 431; after 2,000 fields a Content-Length with its body does not slip through',
    bytes: (t) => request('GET', t.list, fields(100)) + request('GET', t.list, fields(2000) + 'Content-Length: 5\r\n') + 'hello',
    expect: () => ['headers-too-large'],
    calls: 0
  },
  {
    name: '100 header fields: served',
    bytes: (t) => request('GET', t.list, fields(99)) + closing(t),
    expect: () => [200, 200],
    calls: 2
  },
  {
    // 99 fields of 156-character values: about 16,550 bytes as written, 16,250 as Node counts
    // (the target, names and values only).
    name: 'a request line and headers over 16 KiB as written, under it as Node counts: 431',
    bytes: (t) => request('GET', t.list, fields(99, 'v'.repeat(156))),
    expect: () => ['headers-too-large'],
    calls: 0
  },
  {
    name: 'one header field of 20,000 bytes: the parser\'s 431, as a problem',
    bytes: (t) => request('GET', t.list, `X-Big: ${'v'.repeat(20_000)}\r\n`),
    expect: () => ['headers-too-large'],
    calls: 0
  },
  {
    // Node's parser skips them without counting or storing them: a slow client's bytes, which
    // HEADERS_TIMEOUT_MS bounds (the raw-byte limits are the balancer's).
    name: 'whitespace before a value and empty lines before a request line count toward no limit: served',
    bytes: (t) => '\r\n'.repeat(20_000) + request('GET', t.item(slug(1)), `X-Padded: ${' '.repeat(30_000)}v\r\n`) + closing(t),
    expect: () => [200, 200],
    calls: 2
  },
  {
    // Distinct slugs, so that the front coalesces none of them; the fake upstream has them all.
    name: '200 pipelined GETs in one packet (about 40 KB): all answered, none refused',
    bytes: (t) => Array.from({ length: 199 }, (_, i) => request('GET', t.item(`pipelined-${i}`), 'X-Filler: ' + 'f'.repeat(120) + '\r\n')).join('') + closing(t),
    expect: (t) => [...Array.from({ length: 199 }, (): Expected => t.name === 'front' ? 200 : 'post-not-found'), 200],
    calls: 200
  }
]

describeCases(CASES)
