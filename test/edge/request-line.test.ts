// The request line and Host, as RFC 9112 has them, over raw sockets on both tiers: HTTP/1.1 needs
// exactly one Host that is a host (HTTP/1.0 may go without); a version other than 1.0 and 1.1 is
// a 505, a malformed one a 400; a target whose percent-encoding is malformed is a 400 problem with
// every header of an answer.
import { closing, describeCases, request, type Case } from './edge-case.js'

const CASES: Case[] = [
  {
    name: 'HTTP/1.1 without Host: 400',
    bytes: (t) => `GET ${t.list} HTTP/1.1\r\n\r\n`,
    expect: () => ['bad-request'],
    calls: 0
  },
  {
    name: 'HTTP/1.0 without Host: served',
    bytes: (t) => `GET ${t.list} HTTP/1.0\r\n\r\n`,
    expect: () => [200],
    calls: 1
  },
  {
    name: 'malformed percent-encoding: 400 with every header',
    bytes: (t) => request('GET', t.item('%zz')) + closing(t),
    expect: () => ['bad-request', 200],
    calls: 1
  },
  {
    name: 'two Host headers: 400',
    bytes: (t) => request('GET', t.list, 'Host: u\r\n'),
    expect: () => ['bad-request'],
    calls: 0
  },
  {
    name: 'a Host that is not a host: 400',
    bytes: (t) => `GET ${t.list} HTTP/1.1\r\nHost: a b/c\r\n\r\n`,
    expect: () => ['bad-request'],
    calls: 0
  },
  {
    name: 'a request line without a version: 400',
    bytes: (t) => `GET ${t.list}\r\n\r\n`,
    expect: () => ['bad-request'],
    calls: 0
  },
  {
    name: 'HTTP/2.0 in a request line: 505',
    bytes: (t) => request('GET', t.list, '', 'HTTP/2.0'),
    expect: () => ['http-version-not-supported'],
    calls: 0
  },
  {
    name: 'HTTP/1.2: 505 (from the parser)',
    bytes: (t) => request('GET', t.list, '', 'HTTP/1.2'),
    expect: () => ['http-version-not-supported'],
    calls: 0
  },
  {
    name: 'HTTP/3.0: 505 (from the parser)',
    bytes: (t) => request('GET', t.list, '', 'HTTP/3.0'),
    expect: () => ['http-version-not-supported'],
    calls: 0
  },
  {
    name: 'a malformed version (HTTP/1.x): 400',
    bytes: (t) => request('GET', t.list, '', 'HTTP/1.x'),
    expect: () => ['bad-request'],
    calls: 0
  }
]

describeCases(CASES)
