// Requests that announce a body, over raw sockets on both tiers: the routes take none, so a
// body (by Content-Length or a transfer coding) is one 413 and nothing behind it is worked on;
// `Expect` is answered without 100 Continue (417 for an expectation other than 100-continue);
// a Content-Length of zeros is no body.
import { closing, describeCases, request, slug, type Case } from './edge-case.js'

const CASES: Case[] = [
  {
    name: 'Transfer-Encoding: xchunked: one answer, 413',
    bytes: (t) => request('GET', t.list, 'Transfer-Encoding: xchunked\r\n') + 'hello',
    expect: () => ['body-not-allowed'],
    calls: 0
  },
  {
    name: 'Expect: 100-continue with a body: refused at once, without 100 Continue',
    bytes: (t) => request('GET', t.list, 'Expect: 100-continue\r\nContent-Length: 5\r\n'),
    expect: () => ['body-not-allowed'],
    calls: 0
  },
  {
    // The client may still send a body it announced nowhere: Node closes after such an answer,
    // so nothing pipelined behind it is worked on.
    name: 'Expect: 100-continue without a body: served, without 100 Continue, and the connection closed',
    bytes: (t) => request('GET', t.list, 'Expect: 100-continue\r\n') + request('GET', t.item(slug(1))),
    expect: () => [200],
    calls: 1
  },
  {
    name: 'Expect: foo: 417, the connection kept; with a body: 417, closed',
    bytes: (t) => request('GET', t.list, 'Expect: foo\r\n') + request('GET', t.list, 'Expect: foo\r\nContent-Length: 5\r\n') + 'hello',
    expect: () => ['expectation-failed', 'expectation-failed'],
    calls: 0
  },
  {
    name: 'Content-Length: 0, 00 and 000 are no body: served on one connection',
    bytes: (t) => ['0', '00', '000'].map((zero) => request('GET', t.item(slug(14 + zero.length)), `Content-Length: ${zero}\r\n`)).join('') + closing(t),
    expect: () => [200, 200, 200, 200],
    calls: 4
  }
]

describeCases(CASES)
